// Package views holds what every part of the edge's in-memory state
// shares: a listing (Listing), its store, its day and its history
// (History, Window, Base), and the publication of an immutable state
// (Published): a new state is built off to the side and published with
// one atomic pointer swap, so readers never lock and never see a
// half-built state.
//
// The state's rooms are the packages below it, each with one job and none
// doing I/O: replica (the listings), textindex (text search), links
// (links across stores), listq (listing queries and the sort catalogue),
// radix (sorting listing indexes), feed (the change feed), figures (every
// computed figure), served (a replica and its figures, as served),
// series (daily series) and editions (weekly editions).
package views
