package systemtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// victimTable renders, per victim, how long DNS took to converge after the
// burst's last change: median, p95 and max over the trials that
// converged, beside how many did not and how many went over -chaos.bound.
func victimTable(rows []chaosTrial) string {
	byVictim := map[string][]chaosTrial{}
	for _, r := range rows {
		byVictim[r.victim] = append(byVictim[r.victim], r)
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "victim\ttrials\tnot converged\tover %s\tmedian after last change\tp95\tmax\t\n", *chaosBound)
	for _, v := range slices.Sorted(maps.Keys(byVictim)) {
		var after []time.Duration
		notConverged, over := 0, 0
		for _, r := range byVictim[v] {
			if !r.converged {
				notConverged++
				continue
			}
			after = append(after, r.afterBurst)
			if r.afterBurst > *chaosBound {
				over++
			}
		}
		median, p95, maximum := "-", "-", "-"
		if len(after) > 0 {
			slices.Sort(after)
			median, p95, maximum = round(quantile(after, 0.5)), round(quantile(after, 0.95)), round(after[len(after)-1])
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t\n", v, len(byVictim[v]), notConverged, over, median, p95, maximum)
	}
	w.Flush()
	return b.String()
}

// quantile is the q-quantile of sorted by the nearest rank.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func round(d time.Duration) string { return d.Round(10 * time.Millisecond).String() }
