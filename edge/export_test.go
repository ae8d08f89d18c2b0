package edge

// ReadPaths returns the full paths of the routes served as declared
// reads (read.Env.Get), for the test that lists every route.
func (s *Server) ReadPaths() []string { return s.v1.Env().Paths.List() }
