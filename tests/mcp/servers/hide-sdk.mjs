// Registered with `node --import`: module resolution then fails for @modelcontextprotocol/sdk exactly as it does when
// the package is not installed, so the child process sees the library without its optional peer.
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
    export async function resolve(specifier, context, next) {
      if (specifier === '@modelcontextprotocol/sdk' || specifier.startsWith('@modelcontextprotocol/sdk/')) {
        const error = new Error("Cannot find package '@modelcontextprotocol/sdk' imported from " + context.parentURL);
        error.code = 'ERR_MODULE_NOT_FOUND';
        throw error;
      }
      return next(specifier, context);
    }
  `)}`,
);
