package migrate

import "fmt"

// recorder writes the report entries of one input object.
type recorder struct {
	object string
	source string
	report *Report
}

func (r recorder) add(outcome Outcome, field, format string, args ...any) {
	r.report.Entries = append(r.report.Entries, Entry{
		Object: r.object, Source: r.source, Field: field, Outcome: outcome, Message: fmt.Sprintf(format, args...),
	})
}

func (r recorder) unmapped(field, format string, args ...any) {
	r.add(Unmapped, field, format, args...)
}
func (r recorder) changed(field, format string, args ...any) { r.add(Changed, field, format, args...) }
func (r recorder) skipped(format string, args ...any)        { r.add(Skipped, "", format, args...) }
func (r recorder) proposed(field, format string, args ...any) {
	r.add(Proposed, field, format, args...)
}
func (r recorder) kept(field, format string, args ...any) { r.add(Kept, field, format, args...) }
