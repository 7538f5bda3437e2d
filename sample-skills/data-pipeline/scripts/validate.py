#!/usr/bin/env python3
"""Validate a CSV file before it enters a pipeline.

Checks that required columns exist, that required values are non-empty, and
that an optional unique column has no duplicate values. Prints one line per
problem and exits 1 if any were found, 0 otherwise.
"""
import argparse
import csv
import sys


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path", help="CSV file to validate")
    p.add_argument("--require", default="", help="comma-separated required columns")
    p.add_argument("--unique", default=None, help="column whose values must be unique")
    p.add_argument("--delimiter", default=",", help="field delimiter (default: ,)")
    p.add_argument("--max-problems", type=int, default=50, help="stop reporting after N problems")
    return p.parse_args(argv)


def validate(path, required, unique, delimiter, max_problems):
    problems = []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f, delimiter=delimiter)
        header = reader.fieldnames or []
        missing = [c for c in required if c not in header]
        if missing:
            return [f"missing required column(s): {', '.join(missing)}"]
        if unique and unique not in header:
            return [f"unique column not found: {unique}"]
        seen = {}
        rows = 0
        for line_no, row in enumerate(reader, start=2):
            rows += 1
            for col in required:
                if not (row.get(col) or "").strip():
                    problems.append(f"line {line_no}: empty value in required column {col!r}")
            if unique:
                key = row.get(unique)
                if key in seen:
                    problems.append(f"line {line_no}: duplicate {unique}={key!r} (first seen on line {seen[key]})")
                else:
                    seen[key] = line_no
            if len(problems) >= max_problems:
                problems.append("too many problems; stopping")
                break
        if rows == 0:
            problems.append("file has a header but no data rows")
    return problems


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    required = [c.strip() for c in args.require.split(",") if c.strip()]
    try:
        problems = validate(args.path, required, args.unique, args.delimiter, args.max_problems)
    except UnicodeDecodeError as e:
        print(f"not valid UTF-8 at byte {e.start}; see the csv-cleaning skill", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"cannot read {args.path}: {e}", file=sys.stderr)
        return 1
    for p in problems:
        print(p)
    if not problems:
        print(f"OK: {args.path}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
