"""Write the tracer's MPI wrappers from wrappers.tbl (its header explains the table).

Run at build time by the Makefile, on the machine that compiles the tracer, with the Python
that runs Latitude (standard library only):

    python3 lt_gen.py wrappers.tbl OUT.c

Every wrapper has the same shape: take the start time, call the PMPI function (or the real
Fortran entry point), and while tracing write the call line field by field, then the
extension lines its hooks ask for. The hand-written runtime the generated code calls is in
lt.h (buffer, fields) and lt_log.h (completions, requests, statuses, communicators)."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

INT_TYPES = {"int", "MPI_Aint", "MPI_Offset", "MPI_Fint", "MPI_Count"}
# handle type -> its Fortran-to-C conversion
F2C = {
    "MPI_Comm": "PMPI_Comm_f2c",
    "MPI_Datatype": "PMPI_Type_f2c",
    "MPI_Op": "PMPI_Op_f2c",
    "MPI_Group": "PMPI_Group_f2c",
    "MPI_Info": "PMPI_Info_f2c",
    "MPI_Request": "PMPI_Request_f2c",
    "MPI_Errhandler": "PMPI_Errhandler_f2c",
    "MPI_File": "PMPI_File_f2c",
}
HOOKS = {
    "fortran",
    "poll",
    "if",
    "let",
    "newreq",
    "newcomm",
    "forget",
    "wild",
    "complete",
    "start",
    "gone",
    "ext",
    "log_after",
    "log_before",
}


class TableError(Exception):
    pass


@dataclass
class Param:
    decl: str  # as written in mpi.h
    name: str
    base: str  # the type word: int, MPI_Comm, void, ...
    pointer: bool  # a pointer or an array
    how: str  # int ptr hdl dtype comm op list skip
    cond: str | None = None  # dtype?COND / list(N)?COND
    count: str | None = None  # list(N)
    c_only: bool = False

    @property
    def buffer(self) -> bool:
        """A choice buffer (void * / const void *): the Fortran sentinels map to C's."""
        return self.base == "void" and self.decl.count("*") == 1


@dataclass
class Func:
    name: str
    params: list[Param]
    ret: str = "int"
    hooks: list[tuple[str, str]] = field(default_factory=list)
    line: int = 0

    def hook(self, key: str) -> str | None:
        return next((v for k, v in self.hooks if k == key), None)

    def has(self, key: str) -> bool:
        return any(k == key for k, _ in self.hooks)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise TableError(f"line {self.line}: {self.name} has no parameter '{name}'")


# ---- parsing ----
def split_top(text: str, sep: str = ",") -> list[str]:
    """Split at `sep` outside parentheses and brackets."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def closing(text: str, i: int) -> int:
    """Index of the parenthesis closing the one at text[i]."""
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j
    raise TableError(f"unbalanced parentheses in '{text[:60]}'")


def parse_param(text: str, where: str) -> Param:
    decl, how = text, None
    m = re.match(r"^(.*?[\w\]\*.])\s*:(.*)$", text, re.S)
    if m:
        decl, how = m.group(1).strip(), m.group(2).strip()
    if decl == "...":
        return Param(decl, "", "", False, "skip")
    m = re.match(r"^(.*?)(\w+)((?:\[[^\]]*\])*)$", decl)
    if not m:
        raise TableError(f"{where}: cannot read the parameter '{decl}'")
    typ, name, arrays = m.groups()
    words = re.findall(r"\w+", typ)
    base = next((w for w in reversed(words) if w != "const"), "")
    pointer = "*" in typ or bool(arrays)
    p = Param(decl, name, base, pointer, default_how(base, pointer, where))
    if how is None:
        return p
    if how == "c":
        p.c_only = True
    elif how.startswith("dtype?"):
        p.how, p.cond = "dtype", how[6:].strip()
    elif how.startswith("list("):
        end = closing(how, 4)
        p.how, p.count = "list", how[5:end]
        rest = how[end + 1 :].strip()
        if rest:
            if not rest.startswith("?"):
                raise TableError(f"{where}: expected list(N)?COND, got '{how}'")
            p.cond = rest[1:].strip()
    elif how in ("int", "ptr", "hdl", "dtype", "comm", "op", "skip"):
        p.how = how
    else:
        raise TableError(f"{where}: unknown recording '{how}' for {name}")
    return p


def default_how(base: str, pointer: bool, where: str) -> str:
    if pointer:
        return "ptr"
    if base in INT_TYPES:
        return "int"
    if base == "MPI_Comm":
        return "comm"
    if base == "MPI_Datatype":
        return "dtype"
    if base == "MPI_Op":
        return "op"
    if base.startswith("MPI_"):
        return "hdl"
    raise TableError(f"{where}: no default recording for type '{base}'")


def entries(text: str):
    """(line number, entry text) with continuation lines joined."""
    cur, start = None, 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = "" if raw.lstrip().startswith("#") else raw.rstrip()
        if not line.strip():
            continue
        if line[0].isspace():
            if cur is None:
                raise TableError(f"line {n}: continuation line without an entry")
            cur += " " + line.strip()
            continue
        if cur is not None:
            yield start, cur
        cur, start = line.strip(), n
    if cur is not None:
        yield start, cur


def parse_table(text: str) -> list[Func]:
    funcs, seen = [], set()
    for n, entry in entries(text):
        where = f"line {n}"
        m = re.match(r"^(MPI_\w+)\(", entry)
        if not m:
            raise TableError(f"{where}: expected MPI_Name(parameters), got '{entry[:40]}'")
        end = closing(entry, m.end() - 1)
        params = [parse_param(t, where) for t in split_top(entry[m.end() : end])]
        f = Func(m.group(1), params, line=n)
        rest = entry[end + 1 :].strip()
        r = re.match(r"^->\s*(\w+)", rest)
        if r:
            f.ret, rest = r.group(1), rest[r.end() :].strip()
        while rest:
            h = re.match(r"^(\w+)", rest)
            if not h or h.group(1) not in HOOKS:
                raise TableError(f"{where}: {f.name}: unknown hook '{rest.split()[0]}'")
            key, i = h.group(1), h.end()
            if i < len(rest) and rest[i] == "(":
                j = closing(rest, i)
                f.hooks.append((key, rest[i + 1 : j].strip()))
                rest = rest[j + 1 :].strip()
            else:
                f.hooks.append((key, ""))
                rest = rest[i:].strip()
        if f.name in seen:
            raise TableError(f"{where}: {f.name} is listed twice")
        seen.add(f.name)
        for p in f.params:
            for expr in (p.cond, p.count):
                if expr:
                    names(expr, f)
        funcs.append(f)
    return funcs


def names(expr: str, f: Func) -> None:
    """Check that the identifiers of a table expression exist (typos fail at generation)."""
    known = {p.name for p in f.params} | {v.split("=")[0].strip() for k, v in f.hooks if k == "let"}
    for w in re.findall(r"\b[a-z_]\w*\b", expr):
        if w not in known and not w.startswith(("lt_", "mpi_")):
            raise TableError(f"line {f.line}: {f.name}: '{w}' in '{expr}' is not a parameter")


# ---- code generation ----
class Lang:
    """How a wrapper refers to its arguments. In C wrappers the parameters are the C values;
    a Fortran wrapper's parameters are f_<name> pointers, and `locals` declares the C values
    under the parameters' names, so table expressions read the same in both."""

    fortran = False

    def slot(self, p: Param) -> str:  # where a handle lives (its address)
        return p.name

    def handle(self, p: Param) -> str:  # the C handle stored at a pointer parameter
        return f"*{p.name}"


class C(Lang):
    pass


class Fortran(Lang):
    fortran = True

    def slot(self, p: Param) -> str:
        return f"f_{p.name}"

    def handle(self, p: Param) -> str:
        conv = F2C.get(p.base)
        if not conv:
            raise TableError(f"no Fortran conversion for {p.decl}")
        return f"{conv}(*f_{p.name})"


def field_code(p: Param) -> list[str]:
    v = p.name
    if p.how == "skip":
        return []
    if p.how == "int":
        return [f"lt_p = lt_int(lt_p, {v});"]
    if p.how == "ptr":
        cast = "(const void *)(uintptr_t)" if p.base.endswith("_function") else ""
        return [f"lt_p = lt_ptr(lt_p, {cast}{v});"]
    if p.how == "hdl":
        return [f"lt_p = lt_hdl(lt_p, {v});"]
    if p.how == "dtype":
        if p.cond:
            return [f"lt_p = ({p.cond}) ? lt_dtype(lt_p, {v}) : lt_dtype_unused(lt_p, {v});"]
        return [f"lt_p = lt_dtype(lt_p, {v});"]
    if p.how == "comm":
        return [f"lt_p = lt_comm(lt_p, {v});"]
    if p.how == "op":
        return [f"lt_p = lt_op(lt_p, {v});"]
    if p.how == "list":
        counts = f"({p.cond}) ? {v} : NULL" if p.cond else v
        return [f"lt_p = lt_ensure(lt_p, LT_LIST_BYTES({p.count}));", f"lt_p = lt_list(lt_p, {counts}, {p.count});"]
    raise TableError(f"unknown recording {p.how}")


def newreq_code(f: Func, lang: Lang) -> list[str]:
    args = split_top(f.hook("newreq"))
    req = f.param(args[0])
    persistent = "1" if "persistent" in args else "0"
    wild = "lt_is_wild(src, tag) ? comm : MPI_COMM_NULL" if "wild" in args else "MPI_COMM_NULL"
    idup = next((a.split("=", 1)[1].strip() for a in args if a.startswith("idup=")), None)
    if idup and lang.fortran:
        raise TableError(f"line {f.line}: {f.name}: no Fortran wrapper for MPI_Comm_idup")
    return [f"lt_req_new({lang.handle(req)}, {lang.slot(req)}, {persistent}, {wild}, {idup or 'NULL'});"]


def signature(f: Func, lang: Lang) -> str:
    """A hash of a poll's arguments and request handles: polls with equal signatures fold."""
    h = str(int.from_bytes(f.name.encode()[-8:].rjust(8, b"\0"), "little")) + "ull"
    for p in f.params:
        if p.how == "skip" or p.c_only:
            continue
        if lang.fortran:
            v = f"(uintptr_t)f_{p.name}" if p.pointer or p.buffer else f"(uint64_t)*f_{p.name}"
        elif p.pointer:
            v = f"(uintptr_t){p.name}"
        elif p.how == "int":
            v = f"(uint64_t){p.name}"
        else:
            v = f"LT_HANDLE({p.name})"
        h = f"lt_mix({h}, {v})"
    if f.has("complete"):
        reqs, n = split_top(f.hook("complete"))[:2]
        h = f"lt_sig_freqs({h}, f_{reqs}, {n})" if lang.fortran else f"lt_sig_reqs({h}, {reqs}, {n})"
    return h


class Wrapper:
    """The statements of one wrapper, assembled from its hooks (see the table's header)."""

    def __init__(self, f: Func, lang: Lang):
        self.f, self.lang = f, lang
        self.pre: list[str] = []  # before the real call
        self.ext: list[str] = []  # extension lines after the call line
        self.post: list[str] = []  # after the record
        self.args = {p.name: (f"f_{p.name}" if lang.fortran else p.name) for p in f.params if p.decl != "..."}
        self.complete = f.has("complete")
        self.poll = f.has("poll")
        self.ret_stmt = "return;" if lang.fortran and f.ret != "double" else "return lt_rc;"
        if self.complete:
            self.complete_hook()
        for key in ("wild", "start", "gone", "forget"):
            if f.has(key):
                getattr(self, key)(split_top(f.hook(key)))
        if self.poll and not self.complete and not f.hook("poll"):
            raise TableError(f"line {f.line}: {f.name}: poll needs a condition outside complete()")

    def wild(self, a):
        src, tag, st, *ok = a
        if self.lang.fortran:
            self.pre += [
                f"int lt_wild = lt_active() && lt_is_wild({src}, {tag});",
                f"MPI_Fint lt_ftmp[LT_F_STATUS], *lt_fst = lt_wild && fs_status_ignored(f_{st}) ? lt_ftmp : f_{st};",
                "MPI_Status lt_cst;",
            ]
            self.args[st] = "lt_fst"
            cond = "lt_wild" + (f" && {ok[0]}" if ok else "")
            self.ext += [
                f"if ({cond}) {{",
                "    PMPI_Status_f2c(lt_fst, &lt_cst);",
                "    lt_p = lt_ext_status(lt_p, -1, comm, &lt_cst);",
                "}",
            ]
        else:
            ignored = f"{st} == MPI_STATUS_IGNORE"
            self.pre += [
                "MPI_Status lt_tmp;",
                f"MPI_Status *lt_st = lt_active() && lt_is_wild({src}, {tag}) && {ignored} ? &lt_tmp : {st};",
            ]
            self.args[st] = "lt_st"
            cond = f"lt_is_wild({src}, {tag})" + (f" && {ok[0]}" if ok else "")
            self.ext += [f"if ({cond})", "    lt_p = lt_ext_status(lt_p, -1, comm, lt_st);"]

    def start(self, a):
        reqs, n = a
        self.ext.append(
            f"lt_p = lt_fext_start(lt_p, f_{reqs}, {n});"
            if self.lang.fortran
            else f"lt_p = lt_ext_start(lt_p, {reqs}, NULL, {n});"
        )

    def gone(self, a):
        req, kind = a
        p = self.f.param(req)
        self.pre.append(
            f"struct lt_req *lt_r = lt_active() ? lt_req_claim({self.lang.handle(p)}, {self.lang.slot(p)}) : NULL;"
        )
        self.ext.append(f'lt_p = lt_ext_gone(lt_p, "{kind}", lt_r, {int(kind == "free")});')

    def forget(self, a):
        self.pre.append(f"lt_comm_forget({self.lang.handle(self.f.param(a[0]))});")

    def complete_hook(self):
        reqs, n, st, ndone, *idx = split_top(self.f.hook("complete"))
        many = int(self.f.param(st).decl.endswith("[]"))
        index, by_input = (idx[0], 0) if idx else ("NULL", 1)
        if self.lang.fortran:
            self.pre += [
                "struct lt_fcomp lt_f;",
                f"MPI_Fint *lt_fst = lt_fcomp_begin(&lt_f, f_{reqs}, {n}, f_{st}, {many});",
            ]
            self.args[st] = "lt_fst"
            self.claim = "lt_fcomp_claim(&lt_f);"
            self.ext.append(f"lt_p = lt_fcomp_end(lt_p, &lt_f, {index}, lt_ndone, {by_input});")
            self.post.append("lt_fcomp_free(&lt_f);")
        else:
            self.pre += [
                "struct lt_completion lt_c;",
                f"MPI_Status *lt_st = lt_comp_save(&lt_c, {reqs}, {n}, {st}, {many});",
            ]
            self.args[st] = "lt_st"
            self.claim = "lt_comp_claim(&lt_c);"
            self.ext.append(f"lt_p = lt_comp_end(lt_p, &lt_c, {index}, lt_ndone, {by_input});")
            self.post.append(f"lt_comp_free(&lt_c, {st});")
        self.ndone = ndone

    def record(self) -> list[str]:
        """The call line and its extension lines (tracing is on)."""
        f, lang = self.f, self.lang
        out = []
        if self.poll:
            failed = "lt_ndone == 0" if self.complete else f.hook("poll")
            out += [f"uint64_t lt_sig = {signature(f, lang)};"]
            out += [
                f'if (({failed}) && lt_poll_again(lt_sig, "{f.name}", lt_t0)) {{',
                *("    " + s for s in self.post),
                f"    {self.ret_stmt}",
                "}",
            ]
        if self.poll:
            out += ["if (!lt_t0) /* not timed: started a mean poll before now */", "    lt_t0 = lt_poll_start();"]
        if self.complete:
            out.append(self.claim)
        for k, v in f.hooks:
            if k == "let":
                name, expr = (x.strip() for x in v.split("=", 1))
                out.append(f"int {name} = {expr};")
        opener = "lt_open_tick" if self.poll else "lt_open"
        out.append(f'char *lt_p = {opener}("{f.name}", lt_t0, 0);')
        for p in f.params:
            out += field_code(p)
        if f.has("newreq"):
            out += newreq_code(f, lang)
        if self.poll:
            # an offset in the record: writing the extension lines may move the buffer window
            out.append("size_t lt_tend = (size_t)(lt_p - (lt.buf + lt.used));")
        out.append("lt_p = lt_end(lt_p);")
        out += self.ext
        if f.has("newcomm"):
            out.append(f"lt_p = lt_ext_newcomm(lt_p, {lang.handle(f.param(f.hook('newcomm')))});")
        if f.has("ext"):
            out.append(f"lt_p = {f.hook('ext')};")
        if self.poll:
            failed = "lt_ndone == 0" if self.complete else f.hook("poll")
            out += [
                f"if ({failed})",
                f'    lt_poll_first(lt_tend, lt_p, lt_sig, "{f.name}", lt_t0);',
                "else",
                "    lt_commit(lt_p);",
            ]
        else:
            out.append("lt_commit(lt_p);")
        return out


def indent(lines: list[str]) -> list[str]:
    return ["    " + s for s in lines]


def block(lines: list[str]) -> str:
    return "".join("    " + s + "\n" for s in lines)


def body(w: Wrapper, call: str, locals_: list[str]) -> list[str]:
    """Start time, the real call, the record: the shape every generated wrapper shares."""
    f, fortran = w.f, w.lang.fortran
    clock = "lt_poll_t0()" if w.poll else "lt_now()"
    if f.has("log_after"):  # MPI_Init: tracing starts after the real call
        if fortran:
            return [f"{call};", "if (*ierr == MPI_SUCCESS) {", *indent(locals_), f"    {f.hook('log_after')};", "}"]
        return [f"int lt_rc = {call};", "if (lt_rc == MPI_SUCCESS)", f"    {f.hook('log_after')};", "return lt_rc;"]
    out = [f"uint64_t lt_t0 = {clock};", *locals_]
    if f.has("log_before"):  # MPI_Finalize, MPI_Abort: the record precedes the real call
        return out + [f"{f.hook('log_before')};", f"{call};" if fortran else f"return {call};"]
    if w.complete and not fortran:
        plain = f"PMPI_{f.name[4:]}({', '.join(p.name for p in f.params if p.decl != '...')})"
        out += ["if (!lt_active())", f"    return {plain};"]
    out += w.pre
    if fortran:
        out.append(f"double lt_rc = {call};" if f.ret == "double" else f"{call};")
    else:
        out.append(f"{f.ret} lt_rc = {call};")
    if w.complete:
        if fortran:
            out += ["if (!lt_f.on)", "    return;"]
        out.append(f"int lt_ndone = {w.ndone};")
        out += w.record() + w.post
    else:
        out += ["if (lt_active()) {", *indent(w.record()), "}"] + w.post
    if not fortran or f.ret == "double":
        out.append("return lt_rc;")
    return out


def c_wrapper(f: Func) -> str:
    w = Wrapper(f, C())
    params = ", ".join(p.decl for p in f.params) or "void"
    call = f"PMPI_{f.name[4:]}({', '.join(w.args[p.name] for p in f.params if p.decl != '...')})"
    return f"{f.ret} {f.name}({params})\n{{\n{block(body(w, call, []))}}}\n"


def f_param(p: Param) -> str:
    return f"void *f_{p.name}" if p.buffer else f"MPI_Fint *f_{p.name}"


def f_local(p: Param) -> str:
    """The C value of a Fortran argument, under the parameter's name."""
    if p.c_only:
        return f"{p.decl} = NULL;"
    if p.buffer:
        return f"const void *{p.name} = fs_buf(f_{p.name});"
    if not p.pointer:
        if p.base in INT_TYPES:
            return f"{p.base} {p.name} = *f_{p.name};"
        if p.base in F2C:
            return f"{p.base} {p.name} = {F2C[p.base]}(*f_{p.name});"
        raise TableError(f"no Fortran conversion for {p.decl}")
    if p.base == "int":  # integer arrays and outputs: MPI_Fint is int
        const = "const " if p.decl.startswith("const") else ""
        return f"{const}int *{p.name} = f_{p.name};"
    return f"const void *{p.name} = f_{p.name};"  # only its address is written


def fortran_wrapper(f: Func) -> str:
    w = Wrapper(f, Fortran())
    low = f.name[4:].lower()
    fparams = [p for p in f.params if not p.c_only and p.decl != "..."]
    double = f.ret == "double"
    plist = ", ".join([f_param(p) for p in fparams] + ([] if double else ["MPI_Fint *ierr"])) or "void"
    real = f"REAL(pmpi_{low}_)"
    if double:
        call = f"((double (*)(void))(void (*)(void)){real})()"
    else:
        call = f"{real}({', '.join([w.args[p.name] for p in fparams] + ['ierr'])})"
    locals_ = [f_local(p) for p in f.params if p.decl != "..."]
    ret = "double" if double else "void"
    return f"{ret} mpi_{low}_({plist})\n{{\n{block(body(w, call, locals_))}}}\nF_ALIASES({low}, {f.name.upper()})\n"


HEADER = """/* Generated by lt_gen.py from wrappers.tbl: do not edit (edit the table). */
#define _GNU_SOURCE
#include "lt_fortran.h"
#include "lt_log.h"

/* A Fortran wrapper declares the C value of every argument; some records use only a few. */
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
"""


def generate(funcs: list[Func]) -> str:
    out = [HEADER]
    for f in funcs:
        guard = f.hook("if")
        text = c_wrapper(f)
        out.append(f"#if {guard}\n{text}#endif\n" if guard else text)
    out.append("\n#ifdef LT_FORTRAN\n")
    for f in funcs:
        if f.has("fortran"):
            out.append(fortran_wrapper(f))
    out.append("#endif\n")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: lt_gen.py wrappers.tbl OUT.c", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as fh:
            funcs = parse_table(fh.read())
        text = generate(funcs)
    except TableError as e:
        print(f"{argv[1]}: {e}", file=sys.stderr)
        return 2
    tmp = argv[2] + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
