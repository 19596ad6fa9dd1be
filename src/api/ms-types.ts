// The types of `ms` 3, which @temporalio/common's declarations import (`StringValue`, the
// durations Temporal accepts). `ms` 3 ships its types for neither of its `exports` conditions, so
// a program that imports aca and resolves packages as Node does (`"moduleResolution": "node16"`,
// `"nodenext"`, `"bundler"`) cannot find them, and under `strict` fails to compile (TS7016). This
// file has no import or export: its declaration is ambient, reaches every program that loads
// aca's types (the reference in index.ts), and matches what `ms` 3 declares.
declare module 'ms' {
  type Unit =
    | 'Years'
    | 'Year'
    | 'Yrs'
    | 'Yr'
    | 'Y'
    | 'Weeks'
    | 'Week'
    | 'W'
    | 'Days'
    | 'Day'
    | 'D'
    | 'Hours'
    | 'Hour'
    | 'Hrs'
    | 'Hr'
    | 'H'
    | 'Minutes'
    | 'Minute'
    | 'Mins'
    | 'Min'
    | 'M'
    | 'Seconds'
    | 'Second'
    | 'Secs'
    | 'Sec'
    | 's'
    | 'Milliseconds'
    | 'Millisecond'
    | 'Msecs'
    | 'Msec'
    | 'Ms';
  type UnitAnyCase = Unit | Uppercase<Unit> | Lowercase<Unit>;
  export type StringValue = `${number}` | `${number}${UnitAnyCase}` | `${number} ${UnitAnyCase}`;
  interface Options {
    /** Set to `true` to use verbose formatting. Defaults to `false`. */
    long?: boolean;
  }
  function ms(value: StringValue, options?: Options): number;
  function ms(value: number, options?: Options): string;
  export default ms;
}
