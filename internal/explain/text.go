package explain

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteJSON writes e as indented JSON.
func WriteJSON(w io.Writer, e Explanation) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(e)
}

// WriteText writes e for a reader: the summary first, then what it rests on.
func WriteText(w io.Writer, e Explanation, now time.Time) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Pod %s (%s)\n%s\n\n", e.Pod, orDash(string(e.Phase)), e.Summary)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s:\t%s\n", k, fmt.Sprintf(format, args...)) }
	if s := e.Scheduler; s != nil {
		switch {
		case s.Status == "":
			row("Scheduler", "not tried yet (no PodScheduled condition)")
		default:
			line := "PodScheduled=" + s.Status
			if s.Reason != "" {
				line += " (" + s.Reason + ")"
			}
			line += " since " + since(s.Since, now)
			if s.Message != "" {
				line += ": " + s.Message
			}
			row("Scheduler", "%s", line)
		}
	}
	if e.Scope != nil {
		if e.Scope.Provisionable {
			row("Stratos", "looks for capacity for it (marked Unschedulable, not opted out)")
			if !e.Scope.OptedIn {
				row("Pod scope", "%s", notOptedIn)
			}
		} else {
			row("Stratos", "leaves it alone: %s", e.Scope.Why)
		}
	}
	if e.Node != "" {
		row("Node", "%s", e.Node)
	}
	if c := e.NodeClaim; c != nil {
		if c.Gone {
			row("NodeClaim", "%s (gone)", c.Name)
		} else {
			row("NodeClaim", "%s of NodePool %s: phase %s since %s, desired %s", c.Name, c.NodePool, c.Phase, since(c.PhaseSince, now), orDash(c.DesiredState))
		}
	}
	if e.Path != "" {
		row("Path", "%s", e.Path)
	}
	if l := e.Latency.text(); l != "" {
		row("Latency", "%s (from the pod's creation)", l)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	list := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s:\n", title)
		for _, l := range lines {
			fmt.Fprintf(&b, "  - %s\n", l)
		}
	}
	var events []string
	for _, r := range e.Provisioning {
		events = append(events, fmt.Sprintf("%s (x%d, last %s ago): %s", r.Reason, r.Count, now.Sub(r.Last).Round(time.Second), r.Message))
	}
	list("Provisioning's Events on the pod", events)
	if c := e.NodeClaim; c != nil {
		var warnings []string
		for _, r := range c.Warnings {
			warnings = append(warnings, fmt.Sprintf("%s (x%d, last %s ago): %s", r.Reason, r.Count, now.Sub(r.Last).Round(time.Second), r.Message))
		}
		list("The claim's latest warnings", warnings)
	}
	var blockers []string
	for _, bl := range e.Blockers {
		if bl.NodePool != "" {
			blockers = append(blockers, fmt.Sprintf("%s (NodePool %s): %s", bl.Kind, bl.NodePool, bl.Message))
		} else {
			blockers = append(blockers, fmt.Sprintf("%s: %s", bl.Kind, bl.Message))
		}
	}
	list("What may hold capacity back", blockers)
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
