import type { TemplateResolvers } from './resourceTemplates';

const defaultPorts: { readonly [protocol: string]: string } = { 'http:': '80', 'https:': '443' };

/**
 * Resolvers over canonical virtual resources, used until the real-location resolvers
 * (`fsResource` / `urlResource`, issue 14) are wired in here. They never touch the disk: a path is
 * taken as written (so `..`, `.` and doubled slashes stay in it and the ledger refuses them as not
 * canonical), and a symlink is NOT followed; see docs/mcp.md. This is the one seam to replace.
 */
export const virtualResolvers: TemplateResolvers = {
  fs: (path, base) => {
    if (path.startsWith('/')) return `fs:${path}`;
    if (base === undefined) throw new Error('a relative path needs the policy\'s fsBase');
    return `fs:${base.replace(/\/+$/, '')}/${path}`;
  },
  url: (text) => {
    const url = new URL(text);
    if (url.username !== '' || url.password !== '') throw new Error('a URL with userinfo is refused');
    const port = url.port !== '' ? url.port : defaultPorts[url.protocol];
    if (port === undefined) throw new Error('only http: and https: URLs map to resources');
    return `${url.protocol}/${url.hostname}:${port}${url.pathname}`;
  },
};
