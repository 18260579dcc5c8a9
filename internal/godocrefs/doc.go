// Package godocrefs holds only a test: that the comments of Parley's public
// packages send a reader to what a user of the module can read (the A2A
// specification by section, a decision by its name and rule, a Go
// identifier), never to a file of the repository.
package godocrefs
