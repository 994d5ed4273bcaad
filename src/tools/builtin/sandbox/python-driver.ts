/**
 * The driver program `python_interpreter` runs inside python3 (`python3 -u -c PYTHON_DRIVER`).
 *
 * Protocol: the harness writes one JSON request per line, `{"nonce", "code"}`, on the process's stdin; the driver
 * moves that pipe to a private descriptor and gives user code `/dev/null` as stdin. Results travel on descriptor 3,
 * which the driver likewise moves to a private, non-inheritable descriptor and closes, so that nothing printed on
 * stdout or stderr is ever parsed as a result. After each cell the driver flushes the user's streams and writes the
 * cell's nonce as a line on the real stdout and stderr: those barriers tell the harness the cell's output is
 * complete; then it writes `{"nonce", "result", "error", "barriers"}` on the result channel. Result and traceback
 * are capped at 20 000 characters each.
 *
 * Code in the session can still reach the private descriptors with deliberate effort (it runs in the same
 * process); the harness validates every message and ends the session on anything malformed, so the worst forged
 * input can do is end its own session.
 * @module
 */
export const PYTHON_DRIVER = String.raw`
import ast, json, os, sys, traceback

def _cap(text):
    if text is None or len(text) <= 20000:
        return text
    return text[:10000] + '\n[... %d characters omitted ...]\n' % (len(text) - 20000) + text[-10000:]

def _run(code, ns):
    try:
        tree = ast.parse(code, '<cell>', 'exec')
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, '<cell>', 'exec'), ns)
        if last is not None:
            value = eval(compile(last, '<cell>', 'eval'), ns)
            if value is not None:
                return _cap(repr(value)), None
        return None, None
    except SystemExit as exc:
        return None, 'SystemExit: %r' % (exc.code,)
    except BaseException:
        kind, exc, tb = sys.exc_info()
        return None, _cap(''.join(traceback.format_exception(kind, exc, tb.tb_next if tb is not None else None)))

def _flush():
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass

def _barrier(nonce):
    line = ('\n' + nonce + '\n').encode()
    try:
        os.write(1, line)
        os.write(2, line)
        return True
    except OSError:
        return False

def _serve():
    requests = os.fdopen(os.dup(0), 'r', encoding='utf-8')
    results = os.fdopen(os.dup(3), 'w', encoding='utf-8')
    os.close(3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(os.devnull)
    ns = {'__name__': '__main__', '__builtins__': __builtins__}
    while True:
        line = requests.readline()
        if not line:
            return
        request = json.loads(line)
        result, error = _run(request['code'], ns)
        _flush()
        barriers = _barrier(request['nonce'])
        results.write(json.dumps({'nonce': request['nonce'], 'result': result, 'error': error, 'barriers': barriers}) + '\n')
        results.flush()

_serve()
`;
