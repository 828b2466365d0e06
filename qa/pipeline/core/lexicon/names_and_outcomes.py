"""Outcomes and their opposites, name particles, demonyms and abbreviations."""

from __future__ import annotations

# --- Outcomes and claims ----------------------------------------------------------------------

# Each pair: the words of one outcome and of its opposite. Stemmed forms are not enough
# ("won"/"win", "rose"/"rise"), so each side lists its forms. Collected by hand from the demo
# corpus's news reports (votes, trials, markets, rulings).
OPPOSITE_OUTCOMES = (
    ("won win wins winning victory victorious", "lost lose loses losing defeated defeat"),
    ("approved approve approves approval", "rejected reject rejects rejection vetoed veto"),
    (
        "rose rise rises risen rising increased increase increases grew",
        "fell fall falls fallen falling "
        "decreased decrease decreases declined decline declines dropped drop drops",
    ),
    ("passed", "failed"),
    ("accepted accept accepts", "refused refuse refuses declined"),
    ("confirmed confirm confirms", "denied deny denies"),
    (
        "resumed resume resumes restarted restart reopened reopen",
        "halted halt stopped stop suspended suspend shut closed",
    ),
    ("convicted", "acquitted"),
    ("guilty", "innocent"),
    ("allowed allow allows permitted", "banned ban bans prohibited forbade"),
    ("alive survived", "dead died killed"),
)

# Verbs that reverse the outcome after them ("lifted a ban"), besides the negations; collected by
# hand with OPPOSITE_OUTCOMES.
REVERSING_VERBS = frozenset({"lift", "lifted", "lifts", "ended", "end", "overturned", "reversed", "eased"})

# --- Names, places and abbreviations ----------------------------------------------------------
# Name particles, two lists written for two different tests and not merged (a merge changes which
# names match): claims.py lets two names differ by these and still be one name ("Charles de
# Gaulle", "Gaulle"), entities.py drops these from a person's name before looking for it in a
# sentence ("von" Steuben, "bin" Salman, "the" Great).

# Romance, Dutch, German and Arabic surname particles (claims.py).
NAME_PARTICLES = frozenset({"de", "van", "von", "al", "bin", "el", "la", "le", "da"})

# Dutch, German, Italian and Arabic particles and "the" of epithets (entities.py).
PERSON_NAME_PARTICLES = frozenset({"von", "van", "der", "den", "del", "della", "bin", "ibn", "the"})

# Lowercase words inside proper names ("Bank of England", "Trinidad and Tobago", "Charles de
# Gaulle"); turns.py keeps them when it reads a name.
SMALL_WORDS_IN_NAMES = frozenset({"of", "the", "and", "for", "on", "de"})

# Lowercase words between the capitalised words of a record's label ("People and Society:", "Head
# of the Government:"); collected by hand from a scan of World Factbook records, when claims.py
# learned that such lines are records, not statements.
RECORD_LABEL_WORDS = ("and", "of", "the")

# English demonym endings ("Japanese", "Canadian", "Mexican", "British", "Iraqi").
DEMONYM_ENDINGS = ("ese", "ian", "an", "n", "ish", "i")

# How passages speak of what crosses borders, whichever the countries (stems, as
# ``content_words`` gives them); collected by hand from the trade probes.
ACROSS_BORDERS_WORDS = frozenset(
    {"international", "internationally", "oversea", "abroad", "foreign", "cross-border"}
)

# Words nupunkt learned as abbreviations from its training text that are ordinary English words
# ending a sentence ("... in the port."). Derived by bench/segmentation.py (see segment.py's
# docstring), kept as data so that run time needs only nupunkt and the list can be reviewed; the
# script reports when a package upgrade would change it.
NOT_ABBREVIATIONS = frozenset(
    """
    a academe accent acres ad add ago aims alike all am amok an applause apt arb
    arrows art ashore at auto awry b backs bail bank bat bed bets biting black
    bleak bold bombed bond book brash broad bull bus call can cancer cap car cent
    century chaos chase chases cheerful chest chip civilization climb closes coal
    code cold crazy day decks des dig doldrums drunk dull elect enter equal et etc
    faded farce fed fish flag flak flourish found fray free gracefully greenmail
    hall hand hard hers highs holidays horse how human ills in invaders joke jour
    just knees la lab lack lead leg life lock low luck mart me memo mend mess met
    mills miss month nonsense nor okay or overt par parade park pen per pet pick
    pop port prod prods prop rash raw re reporter reports reproach rest rich rife
    rob roll row ruin ruined sand sane sat saw scandal se sent series shade sir
    sleep so soar south spruce stake stars stock story sum sun tables tale talent
    tasks tax taxis tech ten thanks traumas vain victories vise walk wall wave week
    west wheat wheel whites will win wisely woes woods wool works wrath
    """.split()
)

# Abbreviations nupunkt's model lacks that the demo corpus uses ("Lt. Col.", "Cmdr.", "pct.").
EXTRA_ABBREVIATIONS = ("lt", "lieut", "cmdr", "pct")
