"""Time: months, weekdays, ordinal suffixes, relative days and parts of a year."""

from __future__ import annotations

# --- Time -------------------------------------------------------------------------------------

# The English month names and their usual abbreviations (closed class). "may" is a month and a
# modal verb; verification.py removes it from claim keys either way.
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
MONTH_ABBREVIATIONS = ("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec")

# A month name, full or abbreviated, as a regular expression (capturing group): "jan", "january",
# "sep", "sept", "september". dates.py reads dates with it.
MONTH_PATTERN = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)

# The same months as questions.py writes them (non-capturing, "sep(?:t(?:ember)?)?"). It differs
# from MONTH_PATTERN only on the misspelling "sepember", which MONTH_PATTERN accepts.
MONTH_NAME_PATTERN = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)

# The stems of the English weekday names before "day" (closed class).
WEEKDAY_STEMS = ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun")

# English ordinal suffixes after a numeral ("1st", "22nd", "19th"); closed class.
ORDINAL_SUFFIXES = ("st", "nd", "rd", "th")

# Relative day words that date a question ("tomorrow's weather").
RELATIVE_DAYS = ("yesterday", "tomorrow", "tonight", "weekend")

# Parts of a month a date names ("early March 2024", "mid-June 2023"); written by the team for
# dates.py, which gives each a third of the month.
MONTH_PART_WORDS = ("early", "mid", "late")

# Parts of a year, as months (first, last): seasons of the northern hemisphere, quarters and the
# phrases news text uses for a part of a year ("early 2024", "the second half of 2023").
YEAR_PARTS = {
    "early": (1, 4),
    "beginning of": (1, 3),
    "start of": (1, 3),
    "mid": (5, 8),
    "middle of": (5, 8),
    "late": (9, 12),
    "end of": (10, 12),
    "first half of": (1, 6),
    "second half of": (7, 12),
    "spring": (3, 5),
    "summer": (6, 8),
    "autumn": (9, 11),
    "fall": (9, 11),
    "first quarter of": (1, 3),
    "second quarter of": (4, 6),
    "third quarter of": (7, 9),
    "fourth quarter of": (10, 12),
    "q1": (1, 3),
    "q2": (4, 6),
    "q3": (7, 9),
    "q4": (10, 12),
}
