// Code mode's Python engine: CPython 3.11 as an Extism-ABI reactor (see
// build.sh). The interpreter starts in a constructor, which the reactor's
// _initialize runs, and the host's pool runs _initialize before a call
// arrives: a call finds Python started and the prelude (_codemode,
// prelude.py) imported. Each instance serves one program (the host makes a
// fresh one per call), so what a program changes dies with it.
//
// The call input is the host's {"params":{"name","arguments"}}, the
// arguments a codemode.Program: {"code", "language", "tools"}. The output is
// {"content":[{"type":"text","text":JSON}],"structuredContent":JSON} with
// JSON = {"result": VALUE, "console": "..."}; a failure is the error set
// with a non-zero return, its text saying what failed and where.
//
// What must hold whatever the program does is here, in C, with objects taken
// before any program code ran: the tool bridge (_tools.call) checks the name
// against the tools declared to the program, encodes the arguments and
// parses the host's answer with the C encoder and scanner of _json made at
// start, and at a refusal that stops the program (the answer's "refusal" is
// ProgramCallLimit or ProgramSuspended) sets the error and ends the instance
// (proc_exit), which no except can catch. The output envelope is built here too.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXTISM(n) __attribute__((import_module("extism:host/env"), import_name(n)))
EXTISM("input_length") uint64_t x_input_length(void);
EXTISM("input_load_u8") uint32_t x_input_load_u8(uint64_t);
EXTISM("input_load_u64") uint64_t x_input_load_u64(uint64_t);
EXTISM("alloc") uint64_t x_alloc(uint64_t);
EXTISM("store_u8") void x_store_u8(uint64_t, uint32_t);
EXTISM("store_u64") void x_store_u64(uint64_t, uint64_t);
EXTISM("length") uint64_t x_length(uint64_t);
EXTISM("load_u8") uint32_t x_load_u8(uint64_t);
EXTISM("load_u64") uint64_t x_load_u64(uint64_t);
EXTISM("output_set") void x_output_set(uint64_t, uint64_t);
EXTISM("error_set") void x_error_set(uint64_t);
EXTISM("free") void x_free(uint64_t);
__attribute__((import_module("extism:host/user"), import_name("tool_call"))) uint64_t x_tool_call(uint64_t);

extern const struct _frozen codemode_frozen[];

// The kinds of the run's refusals after which a program must not go on
// (synth/jsengine's stopKinds): the run's refusal past the program's call
// limit, and a durable run's answer to a call past the record of its calls.
// The kind is the host's own field of its answer ("refusal"), never the
// text, which a tool writes.
static const char *const stop_kinds[] = {"ProgramCallLimit", "ProgramSuspended"};

static int started;        // Python and the prelude are up
static char start_err[512]; // why not
static PyObject *run_fn;    // _codemode.run
static PyObject *scanner;   // _json.make_scanner(JSONDecoder()): parses the host's answers
static PyObject *encoder;   // _json.make_encoder(...): encodes arguments and results
static PyObject *error_class; // _codemode.ToolError
static PyObject *declared;  // the tools the program may call (a frozenset), or NULL outside a call

// Copies between this module's memory and the kernel's move eight bytes a
// call (each is a call into the Extism kernel), then the rest one by one.
static void store(uint64_t off, const char *s, size_t n) {
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t v;
		memcpy(&v, s + i, 8);
		x_store_u64(off + i, v);
	}
	for (; i < n; i++) x_store_u8(off + i, (unsigned char)s[i]);
}

static void load(uint64_t off, char *d, size_t n) {
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t v = x_load_u64(off + i);
		memcpy(d + i, &v, 8);
	}
	for (; i < n; i++) d[i] = (char)x_load_u8(off + i);
}

static void input(char *d, size_t n) {
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t v = x_input_load_u64(i);
		memcpy(d + i, &v, 8);
	}
	for (; i < n; i++) d[i] = (char)x_input_load_u8(i);
}

static uint64_t put(const char *s, size_t n) {
	uint64_t off = x_alloc(n);
	store(off, s, n);
	return off;
}

static void fail_text(const char *s, size_t n) { x_error_set(put(s, n)); }

// stop ends the instance with msg as the call's error: the program cannot
// catch it, and the host discards the instance.
__attribute__((noreturn)) static void stop(const char *msg, size_t n) {
	fail_text(msg, n);
	_Exit(1);
}

// encode gives the compact JSON text of v (a new str), or NULL with an
// exception set.
static PyObject *encode(PyObject *v) {
	PyObject *chunks = PyObject_CallFunction(encoder, "Oi", v, 0);
	if (!chunks) return NULL;
	PyObject *empty = PyUnicode_FromString("");
	PyObject *s = empty ? PyUnicode_Join(empty, chunks) : NULL;
	Py_XDECREF(empty);
	Py_DECREF(chunks);
	return s;
}

// parse parses JSON text s (str) with the scanner taken at start.
static PyObject *parse(PyObject *s) {
	PyObject *r = PyObject_CallFunction(scanner, "Oi", s, 0);
	if (!r) return NULL;
	PyObject *v = NULL;
	if (PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2) {
		v = PyTuple_GET_ITEM(r, 0);
		Py_INCREF(v);
	} else {
		PyErr_SetString(PyExc_ValueError, "the JSON scanner returned something else than (value, end)");
	}
	Py_DECREF(r);
	return v;
}


// tool_error raises ToolError("tools.NAME: text"), with .tool = NAME.
static PyObject *tool_error(PyObject *name, const char *text) {
	PyObject *msg = PyUnicode_FromFormat("tools.%U: %s", name, text);
	if (!msg) return NULL;
	PyObject *e = PyObject_CallFunctionObjArgs(error_class, msg, name, NULL);
	Py_DECREF(msg);
	if (!e) return NULL;
	PyErr_SetObject((PyObject *)Py_TYPE(e), e);
	Py_DECREF(e);
	return NULL;
}

// content_text joins the text parts of an MCP result's content (a new str).
static PyObject *content_text(PyObject *res) {
	PyObject *content = PyDict_GetItemString(res, "content"); // borrowed
	PyObject *out = PyUnicode_FromString("");
	if (!out || !content || !PyList_Check(content)) return out;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(content); i++) {
		PyObject *c = PyList_GET_ITEM(content, i);
		if (!PyDict_Check(c)) continue;
		PyObject *type = PyDict_GetItemString(c, "type");
		PyObject *text = PyDict_GetItemString(c, "text");
		if (!type || !text || !PyUnicode_Check(type) || !PyUnicode_Check(text) ||
		    PyUnicode_CompareWithASCIIString(type, "text") != 0) continue;
		PyObject *joined = PyUnicode_Concat(out, text);
		Py_DECREF(out);
		if (!joined) return NULL;
		out = joined;
	}
	return out;
}

// tools_call is _tools.call(name, arguments): it calls the host tool name
// with the dict arguments and gives its structured content, or its text
// (parsed when it is a JSON object or array); a refusal or failure raises
// ToolError, and a stop ends the instance.
static PyObject *tools_call(PyObject *self, PyObject *args) {
	PyObject *name, *arguments;
	if (!PyArg_ParseTuple(args, "UO!:call", &name, &PyDict_Type, &arguments)) return NULL;
	if (!declared) {
		PyErr_SetString(PyExc_RuntimeError, "tools are called only while a program runs");
		return NULL;
	}
	int ok = PySet_Contains(declared, name);
	if (ok < 0) return NULL;
	if (!ok) return tool_error(name, "no such tool is declared to this program");
	PyObject *req = PyDict_New();
	if (!req) return NULL;
	if (PyDict_SetItemString(req, "name", name) < 0 || PyDict_SetItemString(req, "arguments", arguments) < 0) {
		Py_DECREF(req);
		return NULL;
	}
	PyObject *text = encode(req);
	Py_DECREF(req);
	if (!text) {
		PyObject *t, *v, *tb;
		PyErr_Fetch(&t, &v, &tb);
		PyObject *sv = v ? PyObject_Str(v) : NULL;
		PyErr_Format(PyExc_TypeError, "tools.%U: the arguments must be JSON values (dict, list, str, int, float, bool, None): %s",
			     name, sv ? PyUnicode_AsUTF8(sv) : "?");
		Py_XDECREF(sv);
		Py_XDECREF(t);
		Py_XDECREF(v);
		Py_XDECREF(tb);
		return NULL;
	}
	Py_ssize_t n;
	const char *s = PyUnicode_AsUTF8AndSize(text, &n);
	if (!s) {
		Py_DECREF(text);
		return NULL;
	}
	uint64_t off = put(s, (size_t)n);
	Py_DECREF(text);
	uint64_t res = x_tool_call(off);
	x_free(off);
	uint64_t len = x_length(res);
	char *buf = malloc(len ? len : 1);
	if (!buf) return PyErr_NoMemory();
	load(res, buf, (size_t)len);
	x_free(res);
	PyObject *raw = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "strict");
	free(buf);
	if (!raw) return NULL;
	PyObject *r = parse(raw);
	Py_DECREF(raw);
	if (!r || !PyDict_Check(r)) {
		Py_XDECREF(r);
		PyErr_Clear();
		return tool_error(name, "the host returned an invalid result");
	}
	PyObject *is_error = PyDict_GetItemString(r, "isError");
	if (is_error == Py_True) {
		PyObject *kind = PyDict_GetItemString(r, "refusal");
		int stops = 0;
		for (size_t i = 0; kind && PyUnicode_Check(kind) && i < sizeof stop_kinds / sizeof *stop_kinds; i++)
			if (PyUnicode_CompareWithASCIIString(kind, stop_kinds[i]) == 0) stops = 1;
		PyObject *t = content_text(r);
		Py_DECREF(r);
		if (!t) return NULL;
		const char *ts = PyUnicode_AsUTF8(t);
		if (!ts) {
			Py_DECREF(t);
			return NULL;
		}
		if (stops) {
			PyObject *m = PyUnicode_FromFormat("the program was stopped: tools.%U: %s", name, ts);
			Py_ssize_t mn;
			const char *ms = m ? PyUnicode_AsUTF8AndSize(m, &mn) : NULL;
			if (ms) stop(ms, (size_t)mn);
			stop("the program was stopped", strlen("the program was stopped"));
		}
		PyObject *out = tool_error(name, ts);
		Py_DECREF(t);
		return out;
	}
	PyObject *sc = PyDict_GetItemString(r, "structuredContent");
	if (sc && sc != Py_None) {
		Py_INCREF(sc);
		Py_DECREF(r);
		return sc;
	}
	PyObject *t = content_text(r);
	Py_DECREF(r);
	if (!t) return NULL;
	// Many tools give JSON as text only: an object or array is given
	// parsed, as its structured content would be; other text as it is.
	PyObject *stripped = PyObject_CallMethod(t, "strip", NULL);
	if (!stripped) return t;
	Py_ssize_t sn = PyUnicode_GET_LENGTH(stripped);
	if (sn > 1) {
		Py_UCS4 a = PyUnicode_READ_CHAR(stripped, 0), z = PyUnicode_READ_CHAR(stripped, sn - 1);
		if ((a == '{' && z == '}') || (a == '[' && z == ']')) {
			PyObject *v = parse(stripped);
			if (v) {
				Py_DECREF(stripped);
				Py_DECREF(t);
				return v;
			}
			PyErr_Clear();
		}
	}
	Py_DECREF(stripped);
	return t;
}

static PyObject *tools_set_error_class(PyObject *self, PyObject *cls) {
	if (error_class) {
		PyErr_SetString(PyExc_RuntimeError, "the error class is set once, by the prelude");
		return NULL;
	}
	Py_INCREF(cls);
	error_class = cls;
	Py_RETURN_NONE;
}

// json_default is the encoder's default: what JSON cannot carry fails with
// the type's name.
static PyObject *json_default(PyObject *self, PyObject *v) {
	return PyErr_Format(PyExc_TypeError, "a %s is not a JSON value", Py_TYPE(v)->tp_name);
}
static PyMethodDef json_default_def = {"default", json_default, METH_O, NULL};

static PyMethodDef tools_methods[] = {
	{"call", tools_call, METH_VARARGS, NULL},
	{"set_error_class", tools_set_error_class, METH_O, NULL},
	{NULL, NULL, 0, NULL},
};
static struct PyModuleDef tools_def = {PyModuleDef_HEAD_INIT, "_tools", NULL, -1, tools_methods};
static PyObject *init_tools(void) { return PyModule_Create(&tools_def); }

// failure_text is the current exception as "what: message" (a static buffer).
static const char *failure_text(const char *what) {
	static char b[600];
	PyObject *t, *v, *tb;
	PyErr_Fetch(&t, &v, &tb);
	PyObject *sv = v ? PyObject_Str(v) : NULL;
	const char *m = sv ? PyUnicode_AsUTF8(sv) : NULL;
	snprintf(b, sizeof b, "%s: %s: %s", what, t ? ((PyTypeObject *)t)->tp_name : "?", m ? m : "?");
	PyErr_Clear();
	Py_XDECREF(sv);
	Py_XDECREF(t);
	Py_XDECREF(v);
	Py_XDECREF(tb);
	return b;
}

// take gets attribute attr of module mod (a new reference), or NULL.
static PyObject *take(const char *mod, const char *attr) {
	PyObject *m = PyImport_ImportModule(mod);
	if (!m) return NULL;
	PyObject *a = PyObject_GetAttrString(m, attr);
	Py_DECREF(m);
	return a;
}

static int start_json(void) {
	PyObject *decoder_class = take("json.decoder", "JSONDecoder");
	PyObject *make_scanner = take("_json", "make_scanner");
	PyObject *make_encoder = take("_json", "make_encoder");
	PyObject *encode_str = take("_json", "encode_basestring");
	int ok = 0;
	if (decoder_class && make_scanner && make_encoder && encode_str) {
		PyObject *decoder = PyObject_CallNoArgs(decoder_class);
		if (decoder) {
			scanner = PyObject_CallOneArg(make_scanner, decoder);
			Py_DECREF(decoder);
		}
		// (markers, default, encoder, indent, key_separator,
		// item_separator, sort_keys, skipkeys, allow_nan): compact, the
		// non-ASCII kept, no NaN (JSON has none).
		PyObject *markers = PyDict_New(); // circular structures fail, not recurse
		PyObject *dflt = PyCFunction_New(&json_default_def, NULL);
		if (markers && dflt)
			encoder = PyObject_CallFunction(make_encoder, "OOOOssiii", markers, dflt, encode_str, Py_None, ":", ",", 0, 0, 0);
		Py_XDECREF(markers);
		Py_XDECREF(dflt);
		ok = scanner && encoder;
	}
	Py_XDECREF(decoder_class);
	Py_XDECREF(make_scanner);
	Py_XDECREF(make_encoder);
	Py_XDECREF(encode_str);
	return ok;
}

__attribute__((constructor)) static void start(void) {
	PyImport_FrozenModules = codemode_frozen;
	if (PyImport_AppendInittab("_tools", init_tools) < 0) {
		snprintf(start_err, sizeof start_err, "python engine: registering _tools failed");
		return;
	}
	PyPreConfig pre;
	PyPreConfig_InitIsolatedConfig(&pre);
	pre.utf8_mode = 1;
	PyStatus st = Py_PreInitialize(&pre);
	if (PyStatus_Exception(st)) {
		snprintf(start_err, sizeof start_err, "python engine: %s: %s", st.func ? st.func : "", st.err_msg ? st.err_msg : "");
		return;
	}
	PyConfig c;
	PyConfig_InitIsolatedConfig(&c);
	c.site_import = 0;
	c.module_search_paths_set = 1; // no path: frozen and builtin modules only
	c.use_hash_seed = 1;           // the same hashes, so the same set order, each run
	c.hash_seed = 0;
	c.install_signal_handlers = 0;
	c.write_bytecode = 0;
	c.pathconfig_warnings = 0;
	c.user_site_directory = 0;
	st = Py_InitializeFromConfig(&c);
	PyConfig_Clear(&c);
	if (PyStatus_Exception(st)) {
		snprintf(start_err, sizeof start_err, "python engine: %s: %s", st.func ? st.func : "", st.err_msg ? st.err_msg : "");
		return;
	}
	if (!start_json()) {
		snprintf(start_err, sizeof start_err, "%s", failure_text("python engine: taking the JSON parser"));
		return;
	}
	run_fn = take("_codemode", "run");
	if (!run_fn || !error_class) {
		snprintf(start_err, sizeof start_err, "%s", failure_text("python engine: the prelude"));
		return;
	}
	// What programs commonly import, imported now, off the call's path.
	static const char *const warm[] = {"json", "re", "math", "collections", "itertools", "functools", "datetime", "decimal", "statistics", "traceback"};
	for (size_t i = 0; i < sizeof warm / sizeof *warm; i++) {
		PyObject *m = PyImport_ImportModule(warm[i]);
		Py_XDECREF(m);
		PyErr_Clear();
	}
	started = 1;
}

// call runs the program of the call input.
__attribute__((export_name("call"))) int32_t call(void) {
	if (!started) {
		const char *m = start_err[0] ? start_err : "python engine: Python did not start";
		fail_text(m, strlen(m));
		return 1;
	}
	uint64_t n = x_input_length();
	char *in = malloc(n ? n : 1);
	if (!in) {
		const char *m = "python engine: no memory for the call input";
		fail_text(m, strlen(m));
		return 1;
	}
	input(in, (size_t)n);
	PyObject *s = PyUnicode_DecodeUTF8(in, (Py_ssize_t)n, "strict");
	free(in);
	PyObject *input = s ? parse(s) : NULL;
	Py_XDECREF(s);
	PyObject *params = input && PyDict_Check(input) ? PyDict_GetItemString(input, "params") : NULL;
	PyObject *a = params && PyDict_Check(params) ? PyDict_GetItemString(params, "arguments") : NULL;
	PyObject *code = a && PyDict_Check(a) ? PyDict_GetItemString(a, "code") : NULL;
	PyObject *tools = a && PyDict_Check(a) ? PyDict_GetItemString(a, "tools") : NULL;
	PyObject *lang = a && PyDict_Check(a) ? PyDict_GetItemString(a, "language") : NULL;
	if (!code || !PyUnicode_Check(code)) {
		PyErr_Clear();
		Py_XDECREF(input);
		const char *m = "the program call's arguments are not {\"code\": \"...\"}";
		fail_text(m, strlen(m));
		return 1;
	}
	if (lang && lang != Py_None && (!PyUnicode_Check(lang) || PyUnicode_CompareWithASCIIString(lang, "python") != 0)) {
		Py_XDECREF(input);
		const char *m = "this engine runs Python programs; set \"language\" to \"python\"";
		fail_text(m, strlen(m));
		return 1;
	}
	PyObject *names = tools && PyList_Check(tools) ? PyFrozenSet_New(tools) : PyFrozenSet_New(NULL);
	if (!names) {
		Py_XDECREF(input);
		const char *m = failure_text("python engine: the tools list");
		fail_text(m, strlen(m));
		return 1;
	}
	PyObject *code_stripped = PyObject_CallMethod(code, "strip", NULL);
	int empty = code_stripped && PyUnicode_GET_LENGTH(code_stripped) == 0;
	Py_XDECREF(code_stripped);
	if (empty) {
		Py_DECREF(names);
		Py_XDECREF(input);
		const char *m = "the program is empty: put the Python in \"code\" (the body of a function: tools.NAME(arg=...) calls a tool, return VALUE gives the answer)";
		fail_text(m, strlen(m));
		return 1;
	}
	declared = names;
	PyObject *out = PyObject_CallFunctionObjArgs(run_fn, code, tools && PyList_Check(tools) ? tools : names, NULL);
	declared = NULL;
	Py_DECREF(input);
	if (!out || !PyTuple_Check(out) || PyTuple_GET_SIZE(out) != 3) {
		const char *m = out ? "python engine: the prelude returned something else than (ok, value, console)" : failure_text("python engine: the prelude failed");
		Py_XDECREF(out);
		Py_DECREF(names);
		fail_text(m, strlen(m));
		return 1;
	}
	Py_DECREF(names);
	PyObject *okv = PyTuple_GET_ITEM(out, 0), *value = PyTuple_GET_ITEM(out, 1), *console = PyTuple_GET_ITEM(out, 2);
	if (!PyUnicode_Check(console)) console = NULL;
	if (okv != Py_True) {
		PyObject *msg = PyUnicode_Check(value) ? value : NULL;
		PyObject *full = msg && console && PyUnicode_GET_LENGTH(console) > 0
				     ? PyUnicode_FromFormat("%U\nconsole output:\n%U", msg, console)
				     : (msg ? (Py_INCREF(msg), msg) : PyUnicode_FromString("the program failed"));
		Py_ssize_t fn;
		const char *fs = full ? PyUnicode_AsUTF8AndSize(full, &fn) : NULL;
		if (fs) fail_text(fs, (size_t)fn);
		else fail_text("the program failed", strlen("the program failed"));
		Py_XDECREF(full);
		Py_DECREF(out);
		return 1;
	}
	PyObject *result = PyDict_New();
	if (!result || PyDict_SetItemString(result, "result", value) < 0 ||
	    (console && PyUnicode_GET_LENGTH(console) > 0 && PyDict_SetItemString(result, "console", console) < 0)) {
		Py_XDECREF(result);
		Py_DECREF(out);
		const char *m = failure_text("python engine");
		fail_text(m, strlen(m));
		return 1;
	}
	PyObject *body = encode(result);
	Py_DECREF(result);
	if (!body) {
		PyObject *t, *v, *tb;
		PyErr_Fetch(&t, &v, &tb);
		PyObject *sv = v ? PyObject_Str(v) : NULL;
		PyObject *m = PyUnicode_FromFormat("the program returned a value JSON cannot encode (return dicts, lists, str, int, float, bool or None): %s",
						   sv ? PyUnicode_AsUTF8(sv) : "?");
		Py_XDECREF(sv);
		Py_XDECREF(t);
		Py_XDECREF(v);
		Py_XDECREF(tb);
		PyErr_Clear();
		Py_ssize_t mn;
		const char *ms = m ? PyUnicode_AsUTF8AndSize(m, &mn) : NULL;
		if (ms) fail_text(ms, (size_t)mn);
		else fail_text("the program returned a value JSON cannot encode", strlen("the program returned a value JSON cannot encode"));
		Py_XDECREF(m);
		Py_DECREF(out);
		return 1;
	}
	Py_DECREF(out);
	// The envelope: the result's JSON as text, and as structured content.
	Py_ssize_t bn, tn;
	const char *bs = PyUnicode_AsUTF8AndSize(body, &bn);
	if (!bs && PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
		PyErr_Clear();
		Py_DECREF(body);
		const char *m = "the program returned text UTF-8 cannot carry (a lone surrogate such as '\\ud800'); return valid text";
		fail_text(m, strlen(m));
		return 1;
	}
	PyObject *text = bs ? encode(body) : NULL;
	const char *ts = text ? PyUnicode_AsUTF8AndSize(text, &tn) : NULL;
	if (!bs || !ts) {
		Py_DECREF(body);
		Py_XDECREF(text);
		const char *m = failure_text("python engine: encoding the result");
		fail_text(m, strlen(m));
		return 1;
	}
	static const char pre[] = "{\"content\":[{\"type\":\"text\",\"text\":", mid[] = "}],\"structuredContent\":", post[] = "}";
	size_t total = (sizeof pre - 1) + (size_t)tn + (sizeof mid - 1) + (size_t)bn + (sizeof post - 1);
	uint64_t o = x_alloc(total), p = o;
	store(p, pre, sizeof pre - 1);
	p += sizeof pre - 1;
	store(p, ts, (size_t)tn);
	p += (uint64_t)tn;
	store(p, mid, sizeof mid - 1);
	p += sizeof mid - 1;
	store(p, bs, (size_t)bn);
	p += (uint64_t)bn;
	store(p, post, sizeof post - 1);
	x_output_set(o, total);
	Py_DECREF(body);
	Py_DECREF(text);
	return 0;
}
