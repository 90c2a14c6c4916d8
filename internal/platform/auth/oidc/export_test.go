package oidc

// Loaded is closed when the keys have first loaded.
func (p *Provider) Loaded() <-chan struct{} { return p.loaded }
