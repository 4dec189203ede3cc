package podutil

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// LoggedNames is how many pod names a log line lists before it counts the rest.
const LoggedNames = 5

// Names lists pods as namespace/name, sorted, the first LoggedNames of them and then how
// many others: "default/a, default/b and 3 other(s)". A log line names a few pods so
// that an operator can follow them, without growing with a burst of thousands.
func Names(pods []*corev1.Pod) string {
	names := make([]string, len(pods))
	for i, pod := range pods {
		names[i] = pod.Namespace + "/" + pod.Name
	}
	slices.Sort(names)
	if len(names) <= LoggedNames {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d other(s)", strings.Join(names[:LoggedNames], ", "), len(names)-LoggedNames)
}
