package store

// columnsSQLite counts the tables named ? and that table's columns named ?.
const columnsSQLite = "SELECT (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?), " +
	"(SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?)"
