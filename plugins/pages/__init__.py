"""Page plugins: each renders pages of the site."""
