"""A corpus of realistic secret formats: fake values in their real shapes, each one unique.

Every entry is ``(format, text holding the secret, needle)``; the needle is the
secret's random core, unique across the corpus, so a grep for it anywhere (the
database, the wiki, its git history, the spool) finds any leak, whole or in part.
"""

from __future__ import annotations

import hashlib
import json

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
HEX = "0123456789abcdef"
UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
B64 = ALNUM + "+/"


def fake(tag: str, size: int, alphabet: str = ALNUM) -> str:
    """``size`` characters of ``alphabet``, derived from ``tag``: stable and unique per tag."""
    out: list[str] = []
    counter = 0
    while len(out) < size:
        digest = hashlib.sha256(f"{tag}:{counter}".encode()).digest()
        out.extend(alphabet[b % len(alphabet)] for b in digest)
        counter += 1
    return "".join(out[:size])


def _pem(kind: str, tag: str) -> tuple[str, str]:
    body = fake(tag, 64, B64)
    lines = "\n".join([body, fake(tag + "2", 64, B64), fake(tag + "3", 40, B64)])
    return f"-----BEGIN {kind}-----\n{lines}\n-----END {kind}-----", body[:24]


def _entries() -> list[tuple[str, str, str]]:
    n = fake  # short alias: every call below has its own tag
    rsa, rsa_needle = _pem("RSA PRIVATE KEY", "pem-rsa")
    ssh, ssh_needle = _pem("OPENSSH PRIVATE KEY", "pem-ssh")
    ec, ec_needle = _pem("EC PRIVATE KEY", "pem-ec")
    gcp_key, gcp_needle = _pem("PRIVATE KEY", "pem-gcp")
    jwt_body = n("jwt-body", 40, ALNUM + "-_")
    azure_key = n("azure-account-key", 86, B64) + "=="
    sas = n("azure-sas", 43, ALNUM) + "%3D"
    discord = f"MT{n('discord-a', 24)}.{n('discord-b', 6)}.{n('discord-c', 38, ALNUM + '_-')}"
    rows: list[tuple[str, str, str]] = [
        ("pem-rsa", f"key file:\n{rsa}\n", rsa_needle),
        ("pem-openssh", f"cat ~/.ssh/id_ed25519\n{ssh}", ssh_needle),
        ("pem-ec", f"{ec[:-30]}", ec_needle),  # cut before its END line
        (
            "pem-in-json",
            json.dumps({"type": "service_account", "private_key": gcp_key}),
            gcp_needle,
        ),
        ("bearer", f"curl -H 'Authorization: Bearer {n('bearer', 40)}' api", n("bearer", 40)),
        ("basic-auth", f"Authorization: Basic {n('basic', 28, B64)}==", n("basic", 28, B64)),
        ("stripe-secret", f"STRIPE=sk_live_{n('stripe-sk', 24)}", n("stripe-sk", 24)),
        ("stripe-restricted", f"use rk_live_{n('stripe-rk', 24)} here", n("stripe-rk", 24)),
        ("stripe-webhook", f"signing whsec_{n('whsec', 32)}", n("whsec", 32)),
        ("openai", f"OpenAI sk-proj-{n('openai', 48)}", n("openai", 48)),
        (
            "anthropic",
            f"sk-ant-api03-{n('anthropic', 80, ALNUM + '-_')}AA",
            n("anthropic", 80, ALNUM + "-_"),
        ),
        ("github-classic", f"git clone https://ghp_{n('ghp', 36)}@github.com/a/b", n("ghp", 36)),
        ("github-oauth", f"token gho_{n('gho', 36)}", n("gho", 36)),
        (
            "ai-memory-api-key",
            f"my key is aim_{n('aim-prefix', 10, HEX)}_{n('aim', 43, ALNUM + '-_')}, use it",
            n("aim", 43, ALNUM + "-_"),
        ),
        ("github-fine", f"github_pat_11{n('ghpat', 20)}_{n('ghpat2', 59)}", n("ghpat", 20)),
        (
            "aws-key-id",
            f"aws_access_key_id = AKIA{n('akia', 16, UPPER_DIGITS)}",
            n("akia", 16, UPPER_DIGITS),
        ),
        ("aws-sts", f"ASIA{n('asia', 16, UPPER_DIGITS)} expires", n("asia", 16, UPPER_DIGITS)),
        (
            "aws-secret",
            f"aws_secret_access_key={n('aws-secret', 40, B64)}",
            n("aws-secret", 40, B64),
        ),
        ("google-api", f"maps key AIza{n('aiza', 35, ALNUM + '-_')}", n("aiza", 35, ALNUM + "-_")),
        ("google-oauth", f"client_secret GOCSPX-{n('gocspx', 28)}", n("gocspx", 28)),
        ("google-access", f"ya29.{n('ya29', 120, ALNUM + '-_')}", n("ya29", 120, ALNUM + "-_")),
        ("slack-bot", f"xoxb-1234567890-{n('xoxb', 24)}", n("xoxb", 24)),
        ("slack-user", f"xoxp-123-456-789-{n('xoxp', 32, HEX)}", n("xoxp", 32, HEX)),
        (
            "slack-webhook",
            f"https://hooks.slack.com/services/T0{n('sw1', 9)}/B0{n('sw2', 9)}/{n('sw3', 24)}",
            n("sw3", 24),
        ),
        ("jwt", f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi{jwt_body}.{n('jwt-sig', 43)}", jwt_body),
        ("url-postgres", f"postgres://app:{n('pg', 20)}@db.internal:5432/app", n("pg", 20)),
        ("url-redis", f"REDIS=redis://default:{n('redis', 24)}@cache:6379", n("redis", 24)),
        ("url-amqp", f"amqps://user:{n('amqp', 18)}@mq.example.com/vhost", n("amqp", 18)),
        ("env-api-key", f"export OPENAI_API_KEY={n('env-api', 30)}", n("env-api", 30)),
        ("env-token", f"GITHUB_TOKEN={n('env-tok', 30)} make release", n("env-tok", 30)),
        ("env-secret", f"DJANGO_SECRET_KEY='{n('env-sec', 50)}'", n("env-sec", 50)),
        ("env-password", f"DB_PASSWORD={n('env-pw', 16)} ./migrate", n("env-pw", 16)),
        ("yaml-password", f"database:\n  password: {n('yaml-pw', 18)}\n", n("yaml-pw", 18)),
        (
            "json-password",
            json.dumps({"user": "ops", "password": n("json-pw", 18)}),
            n("json-pw", 18),
        ),
        (
            "escaped-json-password",
            json.dumps(json.dumps({"password": n("esc-pw", 18)})),
            n("esc-pw", 18),
        ),
        (
            "azure-connection",
            f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={azure_key};EndpointSuffix=core.windows.net",
            azure_key[:40],
        ),
        (
            "azure-sas",
            f"https://acct.blob.core.windows.net/c/f?sv=2022-11-02&ss=b&sp=r&sig={sas}",
            sas[:40],
        ),
        (
            "azure-servicebus",
            f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;"
            f"SharedAccessKey={n('sb', 43, B64)}=",
            n("sb", 43, B64),
        ),
        ("azure-ad-secret", f"AZURE_CLIENT_CRED abc8Q~{n('aad', 34)}", n("aad", 34)),
        ("curl-user", f"curl -u deploy:{n('curl', 20)} https://x.example", n("curl", 20)),
        ("mysql-p", f"mysql -u root -p{n('mysql', 16)} shop < dump.sql", n("mysql", 16)),
        ("password-flag", f"tool login --password {n('pwflag', 18)} --verbose", n("pwflag", 18)),
        ("token-flag", f"gh auth --token {n('tokflag', 30)}", n("tokflag", 30)),
        ("digitalocean", f"doctl auth init -t dop_v1_{n('dop', 64, HEX)}", n("dop", 64, HEX)),
        ("discord-bot", f"client.run('{discord}')", discord[30:60]),
        (
            "discord-webhook",
            f"https://discord.com/api/webhooks/123456789012345678/{n('dwh', 68, ALNUM + '_-')}",
            n("dwh", 68, ALNUM + "_-"),
        ),
        (
            "telegram",
            f"bot = Bot('123456789:AA{n('tg', 33, ALNUM + '_-')}')",
            n("tg", 33, ALNUM + "_-"),
        ),
        (
            "docker-pat",
            f"echo dckr_pat_{n('dckr', 27, ALNUM + '_-')} | docker login",
            n("dckr", 27, ALNUM + "_-"),
        ),
        ("gitlab-pat", f"glpat-{n('glpat', 20, ALNUM + '_-')}", n("glpat", 20, ALNUM + "_-")),
        ("hugging-face", f"HF hf_{n('hf', 34)}", n("hf", 34)),
        ("mailgun", f"api key-{n('mailgun', 32, HEX)}", n("mailgun", 32, HEX)),
        ("npm", f"//registry.npmjs.org/:_authToken=npm_{n('npm', 36)}", n("npm", 36)),
        (
            "pypi",
            f"twine upload -p pypi-AgEIcHlwaS5vcmc{n('pypi', 70, ALNUM + '_-')}",
            n("pypi", 70, ALNUM + "_-"),
        ),
        (
            "sendgrid",
            f"SG.{n('sg1', 22, ALNUM + '_-')}.{n('sg2', 43, ALNUM + '_-')}",
            n("sg2", 43, ALNUM + "_-"),
        ),
        ("shopify", f"shpat_{n('shpat', 32, HEX)}", n("shpat", 32, HEX)),
        ("twilio", f"twilio key SK{n('twilio', 32, HEX)}", n("twilio", 32, HEX)),
        (
            "atlassian",
            f"ATATT3xFfGF0{n('atlassian', 180, ALNUM + '_-')}",
            n("atlassian", 180, ALNUM + "_-"),
        ),
        ("linear", f"lin_api_{n('linear', 40)}", n("linear", 40)),
        ("notion", f"ntn_{n('notion', 46)}", n("notion", 46)),
        ("postman", f"PMAK-{n('pm1', 24, HEX)}-{n('pm2', 34, HEX)}", n("pm2", 34, HEX)),
        ("doppler", f"dp.pt.{n('doppler', 43)}", n("doppler", 43)),
        ("vault", f"VAULT hvs.{n('vault', 90, ALNUM + '_-')}", n("vault", 90, ALNUM + "_-")),
        ("new-relic", f"NRAK-{n('nr', 27, UPPER_DIGITS)}", n("nr", 27, UPPER_DIGITS)),
        ("age", f"AGE-SECRET-KEY-1{n('age', 58, UPPER_DIGITS)}", n("age", 58, UPPER_DIGITS)),
        ("databricks", f"dapi{n('dapi', 32, HEX)}", n("dapi", 32, HEX)),
        ("groq", f"gsk_{n('groq', 52)}", n("groq", 52)),
        (
            "sentry-dsn",
            f"SENTRY https://{n('sentry', 32, HEX)}@o1.ingest.sentry.io/1",
            n("sentry", 32, HEX),
        ),
        ("netrc", f"machine api.example.com login bot password {n('netrc', 20)}", n("netrc", 20)),
        ("xml-password", f"<server><password>{n('xml', 20)}</password></server>", n("xml", 20)),
        ("cookie", f"Cookie: sessionid={n('cookie', 32)}; theme=dark", n("cookie", 32)),
    ]
    return rows


CORPUS: list[tuple[str, str, str]] = _entries()
