package payments

// Router is a Provider whose notifications also arrive at paths of its
// own (a path the provider's dashboard is given), beside the
// POST /payments/<name>/notify every provider has.
type Router interface {
	Routes() []string
}

// Routes are the configured providers' own notification paths, each with
// the provider it serves.
func (c Config) Routes() map[string]string {
	out := map[string]string{}
	for name, p := range c.Providers {
		if r, ok := p.(Router); ok {
			for _, path := range r.Routes() {
				out[path] = name
			}
		}
	}
	return out
}
