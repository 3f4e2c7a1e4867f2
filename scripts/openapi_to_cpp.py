#!/usr/bin/env python3
"""Converts docs/openapi.yaml (the API reference's one source) into JSON and a C++ file that
embeds it, so imagod serves GET /openapi.json without reading anything at run time.

Usage: openapi_to_cpp.py IN.yaml OUT.json OUT.cpp
"""
import json
import sys

import yaml


def main() -> int:
    src, out_json, out_cpp = sys.argv[1:4]
    with open(src, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    delim = "IMAGO_OPENAPI"
    if f"){delim}\"" in text:
        sys.exit("openapi_to_cpp.py: the document contains the raw-string delimiter")
    cpp = (
        "// Generated from docs/openapi.yaml by scripts/openapi_to_cpp.py. Do not edit.\n"
        '#include "api/openapi_document.h"\n\n'
        "namespace imago::api {\n\n"
        "std::string_view openapi_document_json() {\n"
        f'  static constexpr std::string_view kDocument = R"{delim}({text}){delim}";\n'
        "  return kDocument;\n}\n\n}  // namespace imago::api\n"
    )
    for path, body in ((out_json, text), (out_cpp, cpp)):
        try:
            with open(path, encoding="utf-8") as f:
                if f.read() == body:
                    continue  # unchanged: keep the timestamp, nothing recompiles
        except FileNotFoundError:
            pass
        with open(path, "w", encoding="utf-8") as f:
            f.write(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
