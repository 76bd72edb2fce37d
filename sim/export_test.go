package sim

// GeneratedAt is generatedAt, for the external tests.
var GeneratedAt = generatedAt
