"""A wire tap for the MCP tests: `tap.py LOG -- COMMAND…` runs COMMAND, copies this process's
stdin to it line by line (appending each line, as bytes, to LOG) and its stdout back to ours.
Its exit code is COMMAND's. Placed on both sides of `toolmend mcp`, it shows what the client
sent and what the server received, byte for byte."""
import subprocess
import sys
import threading


def main():
    log_path, rest = sys.argv[1], sys.argv[2:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    child = subprocess.Popen(rest, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)

    def downstream():
        for chunk in iter(lambda: child.stdout.readline(), b""):
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()

    out = threading.Thread(target=downstream, daemon=True)
    out.start()
    with open(log_path, "ab", buffering=0) as log:
        for line in sys.stdin.buffer:
            log.write(line)
            try:
                child.stdin.write(line)
                child.stdin.flush()
            except BrokenPipeError:
                break
    try:
        child.stdin.close()
    except BrokenPipeError:
        pass
    code = child.wait()
    out.join(timeout=5)
    sys.exit(code)


main()
