/**
 * What anyone may read about a study the server runs: GET /api/studies/:id/public, the parts its
 * pages show (no quiz answers, no completion codes). No token: a participant's browser asks.
 * Errors have the API's shape, `{error: {code, message}}`.
 */
import express from 'express';
import { publicStudy, type Study } from '../../shared/study/studyFile';

export function mountStudyRoutes(app: express.Application, studies: ReadonlyMap<string, Study>): void {
  const router = express.Router();
  router.get('/:id/public', (req, res) => {
    // Participants see a study as the server started with it; a browser may keep it briefly.
    res.setHeader('Cache-Control', 'no-cache');
    const study = studies.get(req.params.id);
    if (!study) {
      res.status(404).json({ error: { code: 'NOT_FOUND', message: `no study ${JSON.stringify(req.params.id)}` } });
      return;
    }
    res.json(publicStudy(study));
  });
  app.use('/api/studies', router);
}
