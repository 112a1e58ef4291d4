"""Schemathesis hooks for `npm run conformance` (loaded through SCHEMATHESIS_HOOKS).

An import's body is a file: text/csv or application/x-ndjson, described in the OpenAPI
document as a string. Schemathesis has no serializer for those media types; this one sends the
generated string as the file's UTF-8 text, so the operation is tested like any other.
"""
import schemathesis


@schemathesis.serializer("text/csv", "application/x-ndjson")
def file_text(ctx, value):
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")
