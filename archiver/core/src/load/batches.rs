//! Arrow record batches of rows, typed by the schemas the migrated archive declares.
