//go:build !darwin

package calendar

// appleCalWrites: off macOS there is no Calendar.app to write through; a
// copied Calendar.sqlitedb is read-only.
const appleCalWrites = false
