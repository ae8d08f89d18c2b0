#!/usr/bin/env bash
# Measures the lake (issue 77) on a seeded database: one day's export
# with its latest set, as the exports job builds them (wall time, peak
# RSS, bytes of each kind of file against the NDJSON gz of the day),
# DuckDB's times for docs/api-v1.md's three analyst queries on the latest
# set (each in a new process, after the page cache is dropped where this
# user may), and the bytes hyparquet fetches over HTTP for one listing's
# whole history of the largest readings file.
#
#   bench/lake.sh [database] [day]    (default bench_100k 2026-10-31)
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:-bench_100k}
day=${2:-2026-10-31}
: "${EDGE_CH_ADDR:=127.0.0.1:19000}"
out=bench/out/lake-$db
dir=$out/exports
mkdir -p "$out"
[ -n "${SKIP_EXPORT:-}" ] || rm -rf "$dir"
GOEXPERIMENT=simd go build -o bin/edge ./cmd/edge
go build -o bin/lakeserve ./bench/lakeserve
node=$(deploy/node.sh)/node

echo "== export of $day with its latest set ($db)"
[ -n "${SKIP_EXPORT:-}" ] || /usr/bin/time -f "wall %es, max RSS %MkB" bin/edge export --ch-addr "$EDGE_CH_ADDR" --ch-database "$db" \
  --exports-dir "$dir" --day "$day" --latest >"$out/manifests.json" 2>"$out/export.txt" || { cat "$out/export.txt"; exit 1; }
tail -1 "$out/export.txt" # SKIP_EXPORT=1: the files of the run before
python3 - "$out/manifests.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
dec, i, docs = json.JSONDecoder(), 0, []
while i < len(text):
    while i < len(text) and text[i].isspace(): i += 1
    if i >= len(text): break
    d, i = dec.raw_decode(text, i); docs.append(d)
day, latest = docs
print(f"day build {day['seconds']:.1f} s, latest set {latest['seconds']:.1f} s")
kinds = {}
for f in day['files'] + day.get('parquet', []):
    k = f"{f['format']} {f['content']}"
    kinds.setdefault(k, [0, 0]); kinds[k][0] += f['size']; kinds[k][1] += f['rows']
for f in latest['parquet']:
    k = f"latest {f['content']}"
    kinds.setdefault(k, [0, 0]); kinds[k][0] += f['size']; kinds[k][1] += f['rows']
for k, (size, rows) in sorted(kinds.items()):
    print(f"| {k} | {rows:,} rows | {size/1e6:,.1f} MB |")
PY

lake=$(pwd)/$dir/latest/$day/parquet
echo "== DuckDB, the docs' three queries on the latest set"
python3 - "$lake" >"$out/queries.json" <<'PY'
import json, re, sys
doc = open("docs/api-v1.md").read()
section = doc.split("<!-- lake-queries")[1].split("<!-- /lake-queries -->")[0]
qs = [b.split("```")[0] for b in section.split("```sql\n")[1:]]
print(json.dumps([q.replace("'lake/", "'" + sys.argv[1] + "/") for q in qs]))
PY
top=$(echo "[\"SELECT id FROM read_parquet('$lake/readings/store=chrome/part-0.parquet') GROUP BY id ORDER BY count(*) DESC, id LIMIT 1\"]" |
  (cd edge/testdata/lake && "$node" duckdb.mjs) | python3 -c 'import json,sys; print(json.load(sys.stdin)[0][0]["id"])')
for i in 0 1 2; do
  sync; (echo 3 >/proc/sys/vm/drop_caches) 2>/dev/null || true
  python3 -c "import json,sys,re; q=json.load(open('$out/queries.json'))[$i]; print(json.dumps([re.sub(r\"id = '[^']*'\", \"id = '$top'\", q)]))" |
    (cd edge/testdata/lake && DUCKDB_TIMES=1 "$node" duckdb.mjs) | sed "s/^/query $((i + 1)) ms: /"
done

echo "== hyparquet over HTTP: one listing's history of the largest readings file"
big=$(ls -S "$lake"/readings/*/part-0.parquet | head -1)
store=$(basename "$(dirname "$big")")
id=$(echo "[\"SELECT id FROM read_parquet('$big') GROUP BY id ORDER BY count(*) DESC, id LIMIT 1\"]" |
  (cd edge/testdata/lake && "$node" duckdb.mjs) | python3 -c 'import json,sys; print(json.load(sys.stdin)[0][0]["id"])')
bin/lakeserve --dir "$lake" --listen 127.0.0.1:18490 2>"$out/lakeserve.log" &
srv=$!
trap 'kill $srv 2>/dev/null' EXIT
sleep 1
(cd edge/testdata/lake && "$node" hyparquet.mjs "http://127.0.0.1:18490/readings/$store/part-0.parquet" none "$id" id,day,size,rating,rank) |
  python3 -c 'import json,sys; r=json.load(sys.stdin); print(len(r["rows"]), "days;", r["requests"], "requests,", r["bytes"], "bytes of a file of", r["byteLength"])'
