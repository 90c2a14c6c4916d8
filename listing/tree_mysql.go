package listing

// mysqlShareLock is a shared row lock as both MySQL and MariaDB spell it:
// MariaDB (10.11) has no FOR SHARE, which is what ent's builder writes.
const mysqlShareLock = "LOCK IN SHARE MODE"
