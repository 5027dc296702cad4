// Package repotest holds the repository's hygiene tests: nothing built is committed, the
// shape limits (file and function lengths), the import rules and levels, a doc comment on
// every package, and that docs/architecture.md names only paths that exist. It has no code
// of its own; the checks are in its _test.go files and read `git ls-files` and the sources.
package repotest
