# Freezes code mode's prelude and the stdlib modules a program may import
# into a C table for PyImport_FrozenModules: marshalled code objects,
# compiled by the build python, which is the engine's own version (3.11.2),
# so the marshal format is the engine's.
#
#   python3.11 genfrozen.py LIB OUT.c PRELUDE.py MODULE...
#
# The prelude is frozen as _codemode. The engine has no file system, so
# what is not frozen here (or built in) cannot be imported.
import marshal
import os
import sys

if sys.version_info[:3] != (3, 11, 2):
    sys.exit("genfrozen: the build python must be 3.11.2, the engine's version (marshal format); this is %s" % sys.version.split()[0])
lib, out, prelude = sys.argv[1], sys.argv[2], sys.argv[3]
mods = [("_codemode", prelude, 0)]
for m in sys.argv[4:]:
    base = os.path.join(lib, *m.split("."))
    if os.path.isdir(base):
        mods.append((m, os.path.join(base, "__init__.py"), 1))
    else:
        mods.append((m, base + ".py", 0))
rows, blobs, total = [], [], 0
for i, (m, path, pkg) in enumerate(mods):
    with open(path, "rb") as f:
        src = f.read()
    # optimize=2 drops docstrings and asserts: smaller, and nothing a
    # program needs.
    code = compile(src, "<frozen %s>" % m, "exec", dont_inherit=True, optimize=2)
    data = marshal.dumps(code)
    total += len(data)
    blobs.append("static const unsigned char M%d[] = {%s};" % (i, ",".join(str(b) for b in data)))
    rows.append('{"%s", M%d, %d, %d, NULL},' % (m, i, len(data), pkg))
with open(out, "w") as f:
    f.write("#include <Python.h>\n" + "\n".join(blobs) +
            "\nconst struct _frozen codemode_frozen[] = {\n" + "\n".join(rows) + "\n{0, 0, 0, 0, NULL}};\n")
print("genfrozen: %d modules, %d bytes of code" % (len(mods), total))
