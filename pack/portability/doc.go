// Package portability keeps the record of a Memory Portability Package (WM-MEM-012) once pack/mpp
// has built its sealed bytes: the package's identity and revisions, its lifecycle (draft,
// sealed, superseded, withdrawn, disposed), the six local operations of the specification
// (describe, bind, assess, conditions, preflight, receipt) and the import attempts receipts are
// bound to. Every operation appends one attributable, signed event to an append-only log beside
// the sealed bytes and never edits them; replaying the log gives the package's state.
//
// The package is pure: files and the log come in as bytes and the caller does the I/O, so it
// imports nothing from the service and nothing that touches the file system or the network. The
// lifecycle (states, roles, which operation runs in which state) is data: profile.json.
package portability
