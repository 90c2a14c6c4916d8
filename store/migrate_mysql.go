package store

// columnsMySQL counts the tables named ? in the current database and that
// table's columns named ?.
const columnsMySQL = "SELECT (SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?), " +
	"(SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ?)"
