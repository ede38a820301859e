"""Sites: site files and ReFrame configurations, named scales, host detection, run directories."""
