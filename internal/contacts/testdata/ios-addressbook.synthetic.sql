-- SYNTHETIC fixture schema: an iOS AddressBook.sqlitedb reduced to the tables
-- and columns Tidings reads, written by hand from
-- shared/reference/imessage-formats.md §4 (after
-- richinfante/iphonebackuptools tools/reports/phone/address_book.js). Not a
-- copy of an Apple-produced database.
CREATE TABLE ABPerson (
  ROWID INTEGER PRIMARY KEY AUTOINCREMENT,
  First TEXT, Last TEXT, Middle TEXT, FirstPhonetic TEXT, MiddlePhonetic TEXT, LastPhonetic TEXT,
  Organization TEXT, Department TEXT, Note TEXT, Kind INTEGER, Birthday TEXT, JobTitle TEXT,
  Nickname TEXT, Prefix TEXT, Suffix TEXT, FirstSort TEXT, LastSort TEXT,
  CreationDate INTEGER, ModificationDate INTEGER, CompositeNameFallback TEXT,
  ExternalIdentifier TEXT, StoreID INTEGER, DisplayName TEXT, guid TEXT
);
CREATE TABLE ABMultiValue (
  UID INTEGER PRIMARY KEY, record_id INTEGER, property INTEGER, identifier INTEGER,
  label INTEGER, value TEXT, guid TEXT
);
CREATE INDEX ABMultiValueRecordIDIndex ON ABMultiValue(record_id);
CREATE TABLE ABMultiValueLabel (value TEXT, UNIQUE(value));
CREATE TABLE ABMultiValueEntry (parent_id INTEGER, key INTEGER, value TEXT, UNIQUE(parent_id, key));
CREATE TABLE ABMultiValueEntryKey (value TEXT, UNIQUE(value));
