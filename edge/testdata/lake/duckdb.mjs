// Runs SQL queries on local copies of the lake's files with DuckDB (no
// httpfs: the test downloads the files), as an analyst would. Reads a
// JSON array of queries on stdin and prints a JSON array of their rows,
// each row an object (as DuckDB's getRowObjectsJson writes them: BIGINTs
// and dates as text).
//
//   node duckdb.mjs < queries.json
import { DuckDBInstance } from '@duckdb/node-api'

let input = ''
for await (const chunk of process.stdin) input += chunk
const queries = JSON.parse(input)
const instance = await DuckDBInstance.create(':memory:')
const conn = await instance.connect()
const out = []
const times = []
for (const sql of queries) {
  try {
    const start = performance.now()
    const reader = await conn.runAndReadAll(sql)
    times.push(performance.now() - start)
    out.push(reader.getRowObjectsJson())
  } catch (err) {
    console.error(`${err.message}\nin: ${sql}`)
    process.exit(1)
  }
}
// DUCKDB_TIMES=1 prints each query's milliseconds instead (bench/lake.sh).
console.log(JSON.stringify(process.env.DUCKDB_TIMES ? times : out))
