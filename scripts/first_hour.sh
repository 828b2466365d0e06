#!/bin/sh
# The README's "Ask through the API" steps, as one script: list your corpora, ask a question,
# wait for the answer, print it with its citations. Needs curl and python3 (for JSON).
#
#   GROUNDEDQA_TOKEN=$(.venv/bin/python manage.py drf_create_token admin | cut -d' ' -f3) \
#     scripts/first_hour.sh demo "How many containers did the port handle in 2024?"
#
# GROUNDEDQA_URL defaults to http://127.0.0.1:8000 (what `make run` serves).
set -eu

URL=${GROUNDEDQA_URL:-http://127.0.0.1:8000}
: "${GROUNDEDQA_TOKEN:?set GROUNDEDQA_TOKEN: python manage.py drf_create_token YOUR_USERNAME prints one}"
CORPUS=${1:-demo}
QUESTION=${2:-How many containers did the port handle in 2024?}
AUTH="Authorization: Token $GROUNDEDQA_TOKEN"

json() {  # json FIELD: read one field of the JSON on standard input
    python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}

echo "Your corpora:"
curl --silent --show-error --fail-with-body -H "$AUTH" "$URL/api/corpora/" \
    | python3 -c 'import json, sys
for c in json.load(sys.stdin)["results"]:
    print("  %(id)s  %(name)s  (%(ready_count)s of %(document_count)s documents ready)" % c)'

# 1. Ask: 202 Accepted, with the URL to follow.
body=$(python3 -c 'import json, sys; print(json.dumps({"corpus": sys.argv[1], "question": sys.argv[2]}))' \
    "$CORPUS" "$QUESTION")
asked=$(curl --silent --show-error --fail-with-body -H "$AUTH" -H "Content-Type: application/json" \
    -d "$body" "$URL/api/questions/")
status_url=$(printf '%s' "$asked" | json status_url)
echo "Asked: $QUESTION"
echo "Status: $status_url"

# 2. Wait: ?wait=30 answers the moment the question ends, or after 30 s as it stands.
for _ in 1 2 3 4 5 6 7 8 9 10; do
    question=$(curl --silent --show-error --fail-with-body -H "$AUTH" "$status_url?wait=30")
    status=$(printf '%s' "$question" | json status)
    case $status in done | failed) break ;; esac
done

# 3. The answer, each sentence with the source sentences that support it.
printf '%s' "$question" | python3 -c 'import json, sys
q = json.load(sys.stdin)
if q["status"] != "done":
    sys.exit("The question ended %s: %s" % (q["status"], q["error"] or "still running"))
a = q["answer"]
print("Answer (" + a["kind"] + "):", a["text"])
for s in a["sentences"]:
    for c in s["citations"]:
        print("  [%(document)s, %(sentence)s] %(text)s" % c)'
