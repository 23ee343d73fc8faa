"""Read: code lists and other tables into string tables (readers), and the language of a list."""
