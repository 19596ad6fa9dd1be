# The pytest verdict's results channel: each record one line of JSON with a sequence number, signed
# with HMAC-SHA256 under the key only the verdict process read, so that a line written to the
# channel by anything else is seen as such. Its text goes before pytest_verdict.py's in the verdict
# process's `-c` argument (runners/pytest-runner.ts); `_aca_channel` is called once, from the audit
# hook's install, and what it returns follows the hook's rule (every builtin it uses bound here).
# Written for any Python 3.8+ interpreter (a project's venv): no newer syntax.


def _aca_channel(fd, key, write, hmac_digest, quote):
    """Returns `send`, which writes one signed record to `fd` (nothing when there is no channel)."""
    _type = type
    _str = str
    _bool = bool
    _int = int
    _list = list
    _oserror = OSError
    seq = [0]

    def encode(value):
        t = _type(value)
        if t is _str:
            return quote(value)
        if t is _bool:
            return "true" if value else "false"
        if t is _int:
            return _int.__repr__(value)
        if value is None:
            return "null"
        if t is _list:
            return "[" + ",".join([encode(v) for v in value]) + "]"
        return quote("?")

    def send(record):
        if fd is None:
            return
        record["n"] = seq[0]
        seq[0] += 1
        body = ("{" + ",".join([quote(k) + ":" + encode(v) for k, v in record.items()]) + "}").encode()
        data = body + b"\t" + hmac_digest(key, body, "sha256").hex().encode() + b"\n"
        try:
            while data:
                data = data[write(fd, data):]
        except _oserror:
            pass

    return send
