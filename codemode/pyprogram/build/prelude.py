# Code mode's Python prelude, frozen into the engine as _codemode: runner.c
# imports it once, when the instance starts, and calls run for the one
# program the instance serves. The tool bridge itself is C (_tools in
# runner.c): it checks the tool name, encodes the arguments, calls the host,
# parses the result with a parser taken before any program ran, raises
# ToolError, and ends the instance at a stop (the host's answer carries the
# refusal kind ProgramCallLimit or ProgramSuspended), so nothing a program
# changes here reaches the run.
import ast
import builtins
import sys

import _tools

# The builtins the prelude uses, bound in its own namespace: a program may
# replace the builtins' (builtins.str = None), which must not break the
# report of its own failure.
(str, type, isinstance, len, list, tuple, object, super, compile, exec,
 BaseException, SyntaxError, ValueError, TypeError, AttributeError) = (
    builtins.str, builtins.type, builtins.isinstance, builtins.len, builtins.list, builtins.tuple,
    builtins.object, builtins.super, builtins.compile, builtins.exec, builtins.BaseException,
    builtins.SyntaxError, builtins.ValueError, builtins.TypeError, builtins.AttributeError)

# A console keeps the end of what a program prints, as the JavaScript
# engine's does: the end is what explains a failure.
MAX_CONSOLE = 16 << 10


class ToolError(Exception):
    """A tool call the run refused, or that the tool failed."""

    def __init__(self, message, tool=""):
        super().__init__(message)
        self.tool = tool


_tools.set_error_class(ToolError)


class _Console:
    def __init__(self):
        self.parts = []
        self.size = 0
        self.dropped = False

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("print writes str, not %s" % type(s).__name__)
        self.parts.append(s)
        self.size += len(s)
        if self.size > 2 * MAX_CONSOLE:
            keep = "".join(self.parts)[-MAX_CONSOLE:]
            self.parts, self.size, self.dropped = [keep], len(keep), True
        return len(s)

    def flush(self):
        pass

    def tail(self):
        """The end of the output, marked with "…" when its start was
        dropped. A lone surrogate ('\\ud800'), which UTF-8 cannot carry,
        is written escaped."""
        s = "".join(self.parts)
        if self.dropped or len(s) > MAX_CONSOLE:
            s = "\u2026" + s[-MAX_CONSOLE:]
        return _safe(s)


class _Tools:
    """tools.NAME(**arguments) or tools.NAME({...}) calls the tool NAME."""

    __slots__ = ("_names",)

    def __init__(self, names):
        object.__setattr__(self, "_names", tuple(names))

    def __getattr__(self, name):
        if name not in self._names:
            declared = ", ".join(self._names) or "none"
            raise AttributeError("no tool %r is declared to this program (declared: %s)" % (name, declared))

        def call(*args, **kwargs):
            if args:
                if len(args) != 1 or kwargs or not isinstance(args[0], dict):
                    raise TypeError("tools.%s takes keyword arguments, tools.%s(id=7), or one dict, tools.%s({'id': 7})" % (name, name, name))
                kwargs = args[0]
            return _tools.call(name, kwargs)

        call.__name__ = call.__qualname__ = name
        return call

    def __setattr__(self, name, value):
        raise AttributeError("tools cannot be changed")

    def __dir__(self):
        return list(self._names)


PROGRAM_FILE = "program.py"


def _where(lineno, col):
    if lineno is None:
        return ""
    if col is None:
        return " (line %d)" % lineno
    return " (line %d, column %d)" % (lineno, col)


def _raised(e):
    """What the program raised and where: the innermost frame of the
    program's own code (the prelude's frames say nothing to its writer)."""
    lineno = col = None
    tb = e.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == PROGRAM_FILE:
            lineno, col = tb.tb_lineno, None
            if tb.tb_lasti >= 0:
                positions = list(code.co_positions())
                i = tb.tb_lasti // 2
                if i < len(positions) and positions[i][0] == lineno and positions[i][2] is not None:
                    col = positions[i][2] + 1
        tb = tb.tb_next
    text = str(e)
    name = type(e).__name__
    return "the program raised %s%s%s" % (name, ": " + text if text else "", _where(lineno, col))


def _compile(code):
    """The program, the body of a function, compiled: its statements keep
    their own lines and columns."""
    tree = ast.parse(code, PROGRAM_FILE)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            raise SyntaxError("a program is the body of a plain function: no yield or await (tool calls return their results)",
                              (PROGRAM_FILE, node.lineno, node.col_offset + 1, None))
    fn = ast.FunctionDef(
        name="__program__",
        args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=tree.body or [ast.Pass()], decorator_list=[], returns=None, type_comment=None,
        lineno=1, col_offset=0)
    mod = ast.Module(body=[fn], type_ignores=[])
    ast.fix_missing_locations(mod)
    return compile(mod, PROGRAM_FILE, "exec", dont_inherit=True)


def _safe(text):
    """text as UTF-8 can carry it: a lone surrogate escaped."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def run(code, names):
    """Runs one program. Returns (True, value, console) or (False, message,
    console)."""
    con = _Console()
    sys.stdout = sys.stderr = con
    try:
        compiled = _compile(code)
    except SyntaxError as e:
        msg = e.msg or str(e)
        return False, _safe("the program does not compile: %s%s" % (msg, _where(e.lineno, e.offset))), con.tail()
    except (ValueError, TypeError) as e:  # a NUL byte, say
        return False, _safe("the program does not compile: %s" % e), con.tail()
    g = {"__name__": "__program__", "__builtins__": builtins, "tools": _Tools(names), "ToolError": ToolError}
    try:
        exec(compiled, g)
        value = g["__program__"]()
    except BaseException as e:  # SystemExit too: the program ends with it
        return False, _safe(_raised(e)), con.tail()
    return True, value, con.tail()
