"""Sites: site files and ReFrame configurations, named scales, the host and its Rpeak, run directories."""
