// Client matrix (SVC-4 / SVC-4b): openai@7. Its own file, so its library loads (or fails to) on its own; docs/CLIENTS.md.
import { clientSuite } from '../../harness/clients/suite.ts';

clientSuite('openai@7');
