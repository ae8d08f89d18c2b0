// Reads one listing's rows of a Parquet file of the lake over HTTP, as a
// page in a browser would: hyparquet's asyncBufferFromUrl (a HEAD for the
// length, then range requests), its filter on id (row groups skipped by
// their statistics; with usePageIndex and useOffsetIndex, which hyparquet
// leaves off by default, pages by the page index), zstd from
// hyparquet-compressors. Prints the rows and what the reading fetched.
//
//   node hyparquet.mjs <url> <key> <id> <columns, comma-separated>
import { asyncBufferFromUrl, parquetMetadataAsync, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

const [url, key, id, columns] = process.argv.slice(2)
const fetched = { requests: 0, bytes: 0, statuses: [] }
const counting = async (input, init) => {
  const res = await fetch(input, init)
  fetched.requests++
  fetched.statuses.push(res.status)
  if ((init?.method ?? 'GET') !== 'HEAD') fetched.bytes += Number(res.headers.get('content-length') ?? 0)
  return res
}
const file = await asyncBufferFromUrl({ url, requestInit: { headers: { Authorization: `Bearer ${key}` } }, fetch: counting })
// The footer first, in 64 KiB (hyparquet fetches 512 KiB by default):
// the lake's footers are smaller, and a page reads only what it needs.
const metadata = await parquetMetadataAsync(file, { initialFetchSize: 64 << 10 })
const rows = await parquetReadObjects({ file, metadata, compressors, columns: columns.split(','), filter: { id: { $eq: id } }, usePageIndex: true, useOffsetIndex: true })
const json = (_, v) => (typeof v === 'bigint' ? Number(v) : v)
console.log(JSON.stringify({ byteLength: file.byteLength, ...fetched, rows }, json))
