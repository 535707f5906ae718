"""The secret formats ai-memory redacts: one table of pattern strings, shared by two engines.

Pure data, standard library only: the hook client imports it on every agent
event and runs it with :mod:`re` on pre-capped text; the server runs the same
strings with RE2 (linear time, whatever the input). So every pattern keeps to
what both accept and what ``re`` cannot turn quadratic: no look-arounds, no
back-references, no ``\\Z``; every repetition in front of a mandatory part is
bounded, and unbounded runs only end a pattern (or are followed by optional
parts only), so a failed attempt costs a bounded number of steps.

In a match, the group ``v`` is the secret and becomes ``[REDACTED]``; the rest
is kept (a key name, a scheme, ``user:``). Without a ``v`` group the whole
match is the secret. Each pattern lists lower-case literals (``triggers``) of
which every match holds one: text holding none of them skips the pattern, and
an empty tuple means the pattern always runs.
"""

from __future__ import annotations

REDACTED = "[REDACTED]"


class Secret:
    """One format: a plain class, since ``typing.NamedTuple`` is slow to import."""

    __slots__ = ("family", "pattern", "re_pattern", "triggers")

    def __init__(
        self, family: str, pattern: str, triggers: tuple[str, ...], re_pattern: str | None = None
    ) -> None:
        self.family = family
        self.pattern = pattern
        self.triggers = triggers
        # The same pattern for Python's ``re``, where it differs: a possessive ``{0,40}+`` in
        # place of ``{0,40}`` (RE2 has no possessive quantifiers, and needs none).
        self.re_pattern = re_pattern

    def __repr__(self) -> str:
        return f"Secret({self.family!r})"


# An optional quote, however often escaped (``"``, ``\"``, ``\\\"``…): keys inside JSON,
# and inside JSON that was itself put in a JSON string, and so on.
_Q = r"(?:\\{0,15}[\"'])?"
_SEP = r"\s{0,4}(?::=|=>|[:=])\s{0,4}"
# A value: no quote, space or separator ends it (an escaped quote ``\"`` does), and it
# cannot start with ``--`` (so ``private_key: "-----BEGIN`` is left to the PEM pattern).
_UNIT = r"(?:[^\s\"'\\,;&}<>]|\\[^\s\"'\\])"
_VALUE = rf"(?P<v>(?:[^\s\"'\\,;&}}<>-]|-[^\s\"'\\,;&}}<>-]|\\[^\s\"'\\]){_UNIT}*)"
_KEYWORDS = (
    r"api[_-]?key|apikey|api[_-]?secret|secret|token|passw(?:or)?d|passphrase|pwd|"
    r"access[_-]?key|private[_-]?key|credentials?|client[_-]?secret|auth[_-]?key|"
    r"account[_-]?key|signing[_-]?key|encryption[_-]?key|master[_-]?key|cookie|"
    r"connection[_-]?string|sas[_-]?url"
)
_KEY = rf"(?i:{_KEYWORDS})[A-Za-z0-9_-]{{0,40}}"
_KEY_RE = _KEY + "+"
_KEY_TRIGGERS = (
    "key",
    "secret",
    "token",
    "passw",
    "passphrase",
    "pwd",
    "credential",
    "cookie",
    "connection",
    "sas",
)
_PEM_HEAD = r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PEM_TAIL = r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)?"
_CLI_DB = r"mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump"


def _token(family: str, pattern: str, *triggers: str) -> Secret:
    """A token recognised by its own shape (a vendor prefix, mostly): the whole match goes."""
    return Secret(family, rf"\b{pattern}", triggers)


SECRETS: tuple[Secret, ...] = (
    # First: a key's body, before an assignment pattern could take its first line.
    Secret("pem-private-key", rf"{_PEM_HEAD}(?P<v>(?:[^-\"]|-[^-\"])*{_PEM_TAIL})", ("private",)),
    _token("stripe", r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}", "_live_", "_test_"),
    _token("stripe-webhook", r"whsec_[A-Za-z0-9]{20,}", "whsec_"),
    _token("mapbox", r"sk\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", "sk.eyj"),
    _token("openai-anthropic", r"sk-[A-Za-z0-9_-]{16,}", "sk-"),
    _token("github", r"gh[pousr]_[A-Za-z0-9]{20,}", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    _token("github-fine-grained", r"github_pat_[A-Za-z0-9_]{20,}", "github_pat_"),
    _token("ai-memory-api-key", r"aim_[a-z0-9]{10}_[A-Za-z0-9_-]{20,}", "aim_"),
    _token(
        "aws-access-key-id",
        r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}\b",
        *("akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "aroa"),
        *("apka", "asca"),
    ),
    _token("google-api-key", r"AIza[0-9A-Za-z_-]{35}", "aiza"),
    _token("google-oauth-secret", r"GOCSPX-[A-Za-z0-9_-]{20,}", "gocspx-"),
    _token("google-access-token", r"ya29\.[A-Za-z0-9_-]{20,}", "ya29."),
    Secret("google-refresh-token", r"\b1//0[A-Za-z0-9_-]{30,}", ("1//0",)),
    _token("slack-token", r"xox[abposre]-[A-Za-z0-9-]{10,}", "xox"),
    _token("slack-app-token", r"xapp-[0-9]-[A-Za-z0-9-]{10,}", "xapp-"),
    Secret(
        "slack-webhook",
        r"(?P<k>hooks\.slack\.com/(?:services|workflows|triggers)/)(?P<v>[A-Za-z0-9_/-]{16,})",
        ("hooks.slack.com",),
    ),
    Secret(
        "discord-webhook",
        r"(?P<k>discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/)(?P<v>[A-Za-z0-9_-]{20,})",
        ("/api/webhooks/",),
    ),
    _token("discord-bot-token", r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}"),
    Secret("telegram-bot-token", r"\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33}", (":aa",)),
    _token("jwt", r"eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*", "eyj"),
    _token("digitalocean", r"do[por]_v1_[a-f0-9]{64}", "dop_v1_", "doo_v1_", "dor_v1_"),
    _token("docker-hub", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}", "dckr_"),
    _token(
        "gitlab",
        r"gl(?:pat|dt|rt|ptt|soat|cbt|ft|imt|agent|oas|ffct)-[A-Za-z0-9_-]{20,}",
        *("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "glft-", "glimt-"),
        *("glagent-", "gloas-", "glffct-"),
    ),
    _token("grafana", r"gl(?:c|sa)_[A-Za-z0-9_+/=-]{32,}", "glc_", "glsa_"),
    _token("hugging-face", r"(?:hf|api_org)_[A-Za-z0-9]{30,}", "hf_", "api_org_"),
    _token("mailgun", r"key-[0-9a-f]{32}\b", "key-"),
    _token("npm", r"npm_[A-Za-z0-9]{36}\b", "npm_"),
    _token("pypi", r"pypi-AgE[A-Za-z0-9_-]{50,}", "pypi-age"),
    _token("sendgrid", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", "sg."),
    _token(
        "shopify", r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b", "shpat_", "shpss_", "shpca_", "shppa_"
    ),
    _token("twilio-api-key", r"SK[0-9a-fA-F]{32}\b", "sk"),
    _token("atlassian", r"ATATT3[A-Za-z0-9_=-]{20,}", "atatt3"),
    _token("linear", r"lin_(?:api|oauth)_[A-Za-z0-9]{30,}", "lin_api_", "lin_oauth_"),
    _token("notion", r"(?:secret|ntn)_[A-Za-z0-9]{40,}", "secret_", "ntn_"),
    _token("postman", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", "pmak-"),
    _token("doppler", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", "dp."),
    _token("pulumi", r"pul-[a-f0-9]{40}\b", "pul-"),
    _token("terraform-cloud", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,}", ".atlasv1."),
    _token("hashicorp-vault", r"hv[sbr]\.[A-Za-z0-9_-]{24,}", "hvs.", "hvb.", "hvr."),
    _token("new-relic", r"NR(?:AK|II|JS)-[A-Za-z0-9]{27}\b", "nrak-", "nrii-", "nrjs-"),
    _token("square", r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}", "sq0atp-", "sq0csp-"),
    _token("age", r"AGE-SECRET-KEY-1[0-9A-Z]{58}\b", "age-secret-key-"),
    _token("databricks", r"dapi[a-f0-9]{32}\b", "dapi"),
    _token("figma", r"figd_[A-Za-z0-9_-]{30,}", "figd_"),
    _token("supabase", r"sbp_[a-f0-9]{40}\b", "sbp_"),
    _token("sentry-token", r"sntr[ysu]_[A-Za-z0-9_=+/-]{30,}", "sntrys_", "sntryu_", "sntrus_"),
    _token("groq", r"gsk_[A-Za-z0-9]{40,}", "gsk_"),
    _token("replicate", r"r8_[A-Za-z0-9]{30,}", "r8_"),
    _token("perplexity", r"pplx-[A-Za-z0-9]{40,}", "pplx-"),
    _token("xai", r"xai-[A-Za-z0-9]{40,}", "xai-"),
    _token("planetscale", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{30,}", "pscale_"),
    _token("fly-io", r"fo1_[A-Za-z0-9_-]{30,}", "fo1_"),
    _token("netlify", r"nfp_[A-Za-z0-9]{36,}", "nfp_"),
    _token("heroku", r"HRKU-[A-Za-z0-9_-]{30,}", "hrku-"),
    _token("alibaba", r"LTAI[A-Za-z0-9]{12,20}\b", "ltai"),
    _token("circleci", r"CCIPAT_[A-Za-z0-9]{20,}_[a-f0-9]{40}", "ccipat_"),
    _token("cloudflare-origin-ca", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{100,}", "v1.0-"),
    _token("facebook", r"EAA[CG][A-Za-z0-9]{80,}", "eaac", "eaag"),
    _token(
        "braintree",
        r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}",
        "access_token$",
    ),
    Secret("azure-ad-client-secret", r"\b[A-Za-z0-9_~.-]{3}8Q~[A-Za-z0-9_~.-]{31,34}", ("8q~",)),
    Secret(
        "azure-sas-signature",
        r"(?P<k>[?&;](?i:sig)=)(?P<v>[A-Za-z0-9%+/=_-]{10,})",
        ("sig=",),
    ),
    Secret(
        "sentry-dsn",
        r"(?P<k>\bhttps?://)(?P<v>[0-9a-f]{32})(?::[0-9a-f]{32})?@[A-Za-z0-9.-]{0,100}sentry",
        ("sentry",),
    ),
    # Credentials given by context rather than by shape.
    Secret("bearer", r"(?P<k>(?i:\bbearer)\s{1,8})(?P<v>[A-Za-z0-9._~+/=-]{6,})", ("bearer",)),
    Secret(
        "authorization-header",
        rf"(?P<k>(?i:\b(?:proxy-)?authorization){_Q}{_SEP}{_Q}"
        r"(?i:(?:basic|bearer|token|digest|negotiate)\s{1,8})?)(?P<v>[^\s\"'\\,;]+)",
        ("authorization",),
    ),
    Secret(
        "url-userinfo",
        r"(?P<k>\b[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s/:@\"'<>]{0,256}:)"
        r"(?P<v>[^\s/@\"'<>]{1,512})@",
        ("://",),
    ),
    Secret(
        "cli-user-password",
        r"(?P<k>(?:-u|--user)(?:\s{1,4}|=)[\"']?[^\s:\"'-][^\s:\"']{0,255}:)(?P<v>[^\s\"']+)",
        ("-u",),
    ),
    Secret(
        "cli-mysql-password",
        rf"(?P<k>(?i:\b(?:{_CLI_DB})\b)[^\n|;&]{{0,200}}?\s-p[\"']?)(?P<v>[^\s\"']+)",
        ("mysql", "mariadb"),
    ),
    Secret(
        "cli-login-password",
        r"(?P<k>\b(?:sshpass\s{1,4}-p|docker\s{1,4}login\b[^\n|;&]{0,200}?\s-p)\s{0,4}[\"']?)"
        r"(?P<v>[^\s\"']+)",
        ("sshpass", "docker"),
    ),
    Secret(
        "cli-password-flag",
        r"(?P<k>(?i:--(?:password|passwd|pass|token|secret|api-key|apikey|auth-token|"
        r"access-token|client-secret|private-key))(?:\s{1,4}|=)[\"']?)" + _VALUE,
        ("--pass", "--token", "--secret", "--api", "--auth", "--access", "--client", "--private"),
    ),
    Secret(
        "netrc-password",
        r"(?P<k>(?i:\blogin)\s{1,8}[^\s]{1,256}\s{1,8}(?i:password)\s{1,8})(?P<v>[^\s\"']+)",
        ("login",),
    ),
    Secret(
        "xml-element",
        rf"(?P<k><(?i:{_KEYWORDS})[^<>]{{0,40}}>)(?P<v>[^<\s]{{1,512}})<",
        ("<",),
    ),
    *(
        Secret(family, f"(?P<k>{_KEY}{tail}", _KEY_TRIGGERS, f"(?P<k>{_KEY_RE}{tail}")
        for family, tail in (
            ("quoted-assignment", rf"{_Q}{_SEP}\")(?P<v>[^\"\\\n]{{1,512}})\""),
            ("single-quoted-assignment", rf"{_Q}{_SEP}')(?P<v>[^'\n]{{1,512}})'"),
            ("assignment", rf"{_Q}{_SEP}{_Q}){_VALUE}"),
        )
    ),
)

# A JSON key (or header name) whose value is a credential whatever the value looks like.
SENSITIVE_KEY = rf"(?i:{_KEYWORDS}|authorization)"
SENSITIVE_KEY_TRIGGERS: tuple[str, ...] = (*_KEY_TRIGGERS, "authorization")

_TOKEN_ENDS = " \t\r\n\"',;"


def kept_around(whole: str, start: int, secret: tuple[int, int] | None, kept_end: int) -> str:
    """A match's replacement: the secret span (absolute offsets) becomes REDACTED.

    Without a secret span, what follows ``kept_end`` (the end of a ``k`` group, or the
    match's start) is the secret.
    """
    if secret is not None and secret[0] >= 0:
        return f"{whole[: secret[0] - start]}{REDACTED}{whole[secret[1] - start :]}"
    return f"{whole[: kept_end - start]}{REDACTED}"


def cut_at_token(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the run of token characters crossing the cut dropped.

    So no half of a secret is kept where no pattern could recognise it. Plain string
    scans (no regex): linear on any input.
    """
    if len(text) <= limit:
        return text
    head = text[:limit]
    last = max(head.rfind(ch) for ch in _TOKEN_ENDS)
    return head[: last + 1]
