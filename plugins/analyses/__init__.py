"""Analysis plugins: each turns the tables of results into findings."""
