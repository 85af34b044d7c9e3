package calendar

// appleCalWrites: on macOS, events are created through Calendar.app
// (applecal_write.go).
const appleCalWrites = true
