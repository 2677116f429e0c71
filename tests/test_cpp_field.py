"""`cpp_field`: the values a C struct's fields are given, as a function table is filled, in every
spelling a C or C++ author may use, and judged stub or real by the function a value names."""

from __future__ import annotations

from pathlib import Path

from air.evidence import Evaluator, clause_from_data
from air.evidence.base import Context
from air.index import build_index
from helpers.trees import write_tree

TABLE = {
    "table.h": """\
typedef struct Table { void* open; void* close; void* read; void* write; void* seek; } Table;
""",
    "direct.cc": """\
#include "table.h"
static int DoOpen(void* args) { return run_open(args); }
static int DoClose(void*) { return 0; }
static int DoRead(void*) { return MakeUnimplemented("read"); }
void Fill(Table* t) {
  t->open = DoOpen;
  t->close = &DoClose;
  t->read = ns::DoRead;
  t->seek = nullptr;
  if (t->write == nullptr) {}
}
""",
    "designated.c": """\
static int WriteImpl(void* a) { return store(a); }
static Table kTable = {
    .open = 0,
    .write = WriteImpl,
    .seek = +[](void* a) -> int { return seek_to(a); },
};
""",
    "listed.cc": """\
#define TABLE_FIELDS(V) V(open) V(read)
#define SET_IMPL(f) table.f = Impl_##f;
static int Impl_open(void* a) { return really_open(a); }
static int Impl_read(void*) { throw std::runtime_error("no"); }
void Init(Table& table) {
  TABLE_FIELDS(SET_IMPL)
}
""",
}


def hits(root: Path, spec: dict) -> list[tuple[str, int, str, str, str | None]]:
    clause = clause_from_data("c", {"cpp_field": spec})
    result = Evaluator(Context(build_index(root), {})).result(clause)
    return sorted((h.path, h.line, h.capture("FIELD"), h.capture("VALUE"), h.capture("VIA")) for h in result.hits)


def test_member_assignments_designated_initialisers_and_macro_lists(tmp_path):
    write_tree(tmp_path, TABLE)
    assert hits(tmp_path, {"name": ["open", "close", "read", "write", "seek"]}) == [
        ("designated.c", 4, "write", "WriteImpl", None),
        ("designated.c", 5, "seek", "+[](void* a) -> int { return seek_to(a); }", None),
        ("direct.cc", 6, "open", "DoOpen", None),
        ("direct.cc", 7, "close", "&DoClose", None),
        ("direct.cc", 8, "read", "ns::DoRead", None),
        ("listed.cc", 6, "open", "Impl_open", "TABLE_FIELDS"),
        ("listed.cc", 6, "read", "Impl_read", "TABLE_FIELDS"),
    ]


def test_bodies_tell_real_functions_from_stubs(tmp_path):
    write_tree(tmp_path, TABLE)
    fields = ["open", "close", "read", "write", "seek"]
    real = hits(tmp_path, {"name": fields, "bodies": "real", "placeholders": ["MakeUnimplemented"]})
    assert [(path, field) for path, _, field, _, _ in real] == [
        ("designated.c", "write"),
        ("designated.c", "seek"),
        ("direct.cc", "open"),
        ("listed.cc", "open"),
    ]
    stub = hits(tmp_path, {"name": fields, "bodies": "stub", "placeholders": ["MakeUnimplemented"]})
    assert [(path, field) for path, _, field, _, _ in stub] == [
        ("direct.cc", "close"),
        ("direct.cc", "read"),
        ("listed.cc", "read"),
    ]


def test_a_macro_nobody_expands_and_a_comparison_assign_nothing(tmp_path):
    write_tree(
        tmp_path,
        {
            "unused.cc": "#define NEVER(f) api->f = Impl_##f;\nbool Same(Api* api) { return api->open == other; }\n",
            "commented.cc": "void F(Api* api) {\n  // api->open = DoOpen;\n  /* api->open = X; */\n}\n",
        },
    )
    assert hits(tmp_path, {"name": "open"}) == []


def test_functions_a_macro_defines_are_judged_on_its_expansion(tmp_path):
    write_tree(
        tmp_path,
        {
            "list.h": "#define EACH(V) V(open) V(seek)\n",
            "stubs.cc": '#include "list.h"\n#define MAKE_STUB(f) int Missing_##f(void*) { return ReportMissing(#f); }\n'
            "EACH(MAKE_STUB)\n#define POINT(f) t->f = Missing_##f;\nvoid Fill(Table* t) { EACH(POINT) }\n",
        },
    )
    spec = {"name": ["open", "seek"], "placeholders": ["ReportMissing"]}
    assert [field for _, _, field, _, _ in hits(tmp_path, {**spec, "bodies": "stub"})] == ["open", "seek"]
    assert hits(tmp_path, {**spec, "bodies": "real"}) == []


def test_a_macro_whose_expansion_ends_at_a_lambdas_brace(tmp_path):
    write_tree(
        tmp_path,
        {
            "bind.cc": "void Bind(Api* api) {\n#define UNSET(F) api->F = +[](F##_Args*) { return Refuse(#F); }\n"
            '#include "unset.inc"\n}\n',
            "unset.inc": "UNSET(close);\nUNSET(seek)\n",
        },
    )
    found = hits(tmp_path, {"name": ["close", "seek"], "bodies": "stub", "placeholders": ["Refuse"]})
    assert [(path, line, field) for path, line, field, _, _ in found] == [
        ("unset.inc", 1, "close"),
        ("unset.inc", 2, "seek"),
    ]
