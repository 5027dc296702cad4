// Package repotest holds the repository's hygiene test: nothing built is committed. It has no
// code of its own; the check is in repotest_test.go and reads `git ls-files`.
package repotest
