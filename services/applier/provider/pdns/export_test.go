package pdns

// Downloads is how many times p downloaded a whole zone.
func (p *Provider) Downloads() int64 { return p.downloads.Load() }
