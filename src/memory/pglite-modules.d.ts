/**
 * PGlite publishes these entry points only through package.json "exports", which this
 * project's `moduleResolution: node` does not read; Node's require() does. These declarations
 * point the compiler at the same typings, so the code imports the supported public names.
 */
declare module '@electric-sql/pglite/node-postgres' {
  export * from '@electric-sql/pglite/dist/node-postgres/index';
}
declare module '@electric-sql/pglite/contrib/pg_trgm' {
  export * from '@electric-sql/pglite/dist/contrib/pg_trgm';
}
