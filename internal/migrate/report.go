package migrate

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Outcome says what became of a field of the input.
type Outcome string

const (
	// Unmapped: the field has no Stratos equivalent and is not in the output.
	Unmapped Outcome = "unmapped"
	// Changed: the field is in the output, but renamed, moved, or with a meaning that
	// differs from Karpenter's; the message says how.
	Changed Outcome = "changed"
	// Skipped: the whole object is not in the output; the message says why.
	Skipped Outcome = "skipped"
	// Kept: the field is converted as it is, but it matters to the move; the message
	// says why (a Karpenter discovery tag the selectors still use, say).
	Kept Outcome = "kept"
	// Proposed: migrate added what the input did not have (the warm pool of --standby).
	Proposed Outcome = "proposed"
)

// Entry is one line of the report: what became of one field of one object.
type Entry struct {
	// Object is the input object, such as "NodePool default" or "EC2NodeClass gpu".
	Object string `json:"object"`
	// Source is the file (or "cluster") the object came from.
	Source string `json:"source,omitempty"`
	// Field is the field's path in the Karpenter object, such as
	// spec.template.spec.requirements[2]; empty for the whole object.
	Field   string  `json:"field,omitempty"`
	Outcome Outcome `json:"outcome"`
	// Message says why, and what a user should do if anything.
	Message string `json:"message"`
}

// WorkloadFinding is a workload whose pods select, prefer or spread over a Karpenter
// label, or carry a Karpenter annotation.
type WorkloadFinding struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Source    string `json:"source,omitempty"`
	// Field is where the pod template uses the key, such as
	// spec.template.spec.nodeSelector.
	Field string `json:"field"`
	// Key is the Karpenter label or annotation.
	Key string `json:"key"`
	// Stratos is the key to use instead; empty when there is no equivalent.
	Stratos string `json:"stratos,omitempty"`
	// Note says what else changes, or why there is no equivalent.
	Note string `json:"note,omitempty"`
}

// Report is everything migrate has to say about a conversion.
type Report struct {
	Entries   []Entry           `json:"entries"`
	Workloads []WorkloadFinding `json:"workloads"`
}

// sort orders the report by object, then field, so that its output is stable.
func (r *Report) sort() {
	sort.SliceStable(r.Entries, func(i, j int) bool {
		a, b := r.Entries[i], r.Entries[j]
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		return a.Field < b.Field
	})
	sort.SliceStable(r.Workloads, func(i, j int) bool {
		a, b := r.Workloads[i], r.Workloads[j]
		if x, y := a.Kind+"/"+a.Namespace+"/"+a.Name, b.Kind+"/"+b.Namespace+"/"+b.Name; x != y {
			return x < y
		}
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		return a.Key < b.Key
	})
}

// WriteJSON writes the report as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	out := *r
	if out.Entries == nil {
		out.Entries = []Entry{}
	}
	if out.Workloads == nil {
		out.Workloads = []WorkloadFinding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteText writes the report for a person: the entries grouped by object, then the
// workloads to change.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	if len(r.Entries) == 0 {
		b.WriteString("Every field was converted as it was.\n")
	}
	last := ""
	for _, e := range r.Entries {
		if e.Object != last {
			if last != "" {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "%s", e.Object)
			if e.Source != "" {
				fmt.Fprintf(&b, " (%s)", e.Source)
			}
			b.WriteString("\n")
			last = e.Object
		}
		field := e.Field
		if field == "" {
			field = "(object)"
		}
		fmt.Fprintf(&b, "  %-9s %s: %s\n", e.Outcome, field, e.Message)
	}
	if len(r.Workloads) > 0 {
		b.WriteString("\nWorkloads that use Karpenter's labels or annotations:\n")
		for _, f := range r.Workloads {
			name := f.Name
			if f.Namespace != "" {
				name = f.Namespace + "/" + f.Name
			}
			instead := "no equivalent"
			if f.Stratos != "" {
				instead = "use " + f.Stratos
			}
			fmt.Fprintf(&b, "  %s %s: %s %s: %s", f.Kind, name, f.Field, f.Key, instead)
			if f.Note != "" {
				fmt.Fprintf(&b, " (%s)", f.Note)
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
