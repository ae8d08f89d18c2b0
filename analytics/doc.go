// Package analytics holds every line of SQL the edge runs against
// ClickHouse: the schema and its migrations, the writers the seeder uses
// for the upstream tables, and the streaming readers that fill the
// in-memory views. The SQL runs on ClickHouse 18.16 and on current
// releases: plain types only, no window functions, no server-side query
// parameters, and every batch insert names its columns.
package analytics
