import { parseProjectConfig } from '../../../../src/repo';

describe('.aca.json tools', () => {
  test('run_command is offered unless the project says runCommand: false', () => {
    expect(parseProjectConfig('{}', '.aca.json').runCommand).toBe(true);
    expect(parseProjectConfig('{"tools": {}}', '.aca.json').runCommand).toBe(true);
    expect(parseProjectConfig('{"tools": {"runCommand": true}}', '.aca.json').runCommand).toBe(true);
    expect(parseProjectConfig('{"tools": {"runCommand": false}}', '.aca.json').runCommand).toBe(false);
  });

  test('anything else under tools is refused, naming the key', () => {
    expect(() => parseProjectConfig('{"tools": {"runCommand": "no"}}', '.aca.json')).toThrow(
      /\.aca\.json: tools\.runCommand: /,
    );
    expect(() => parseProjectConfig('{"tools": {"mcpServers": {}}}', '.aca.json')).toThrow(
      /tools: unknown key\(s\) mcpServers/,
    );
  });
});
