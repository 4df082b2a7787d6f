package dedup

// ranking orders sources or clusters: a lower rank wins. Names not listed
// rank last, all equal.
type ranking map[string]int

func newRanking(priority []string) ranking {
	r := make(ranking, len(priority))
	for i, s := range priority {
		if _, dup := r[s]; !dup {
			r[s] = i
		}
	}
	return r
}

func (r ranking) of(name string) int {
	if rank, ok := r[name]; ok {
		return rank
	}
	return len(r)
}
