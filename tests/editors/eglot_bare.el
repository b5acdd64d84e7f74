;;; eglot_bare.el --- batch driver for tests/editors/test_emacs_package.py (the bare Eglot config)  -*- lexical-binding: t -*-

;; Usage: emacs -Q --batch -l tests/editors/eglot_bare.el (in the folder holding file.py)
;; Loads FLOWEDIT_EMACS_CONFIG (docs/editors.md's Eglot configuration without the package) like an init
;; file, visits file.py, connects Eglot as M-x eglot would (the server from `eglot-server-programs'), and
;; asks for the code actions of the first occurrence of FLOWEDIT_EMACS_TARGET, then runs the one titled "Review
;; file" as Eglot runs a chosen action and waits for the findings Eglot takes in.  Writes the server's name,
;; the actions' titles and the findings' texts to FLOWEDIT_EMACS_SUMMARY.  Exit 0 = the driver got through.

(setq native-comp-deferred-compilation nil)
(require 'package)
(setq package-directory-list '("/usr/share/emacs/site-lisp/elpa"))
(package-initialize)
(require 'json)
(require 'cl-lib)

(let (summary errors)
  (condition-case err
      (progn
        (load (getenv "FLOWEDIT_EMACS_CONFIG") nil t)
        (require 'eglot)
        (with-current-buffer (find-file "file.py")
          (let ((eglot-sync-connect t))
            (apply #'eglot (eglot--guess-contact)))
          (let ((server (eglot-current-server)))
            (push (cons 'server (and server (plist-get (eglot--server-info server) :name))) summary)
            (goto-char (point-min))
            (search-forward (getenv "FLOWEDIT_EMACS_TARGET"))
            (let ((actions (jsonrpc-request
                            server :textDocument/codeAction
                            (list :textDocument (eglot--TextDocumentIdentifier)
                                  :range (list :start (eglot--pos-to-lsp-position (match-beginning 0))
                                               :end (eglot--pos-to-lsp-position (match-end 0)))
                                  :context (list :diagnostics [])))))
              (push (cons 'actions (vconcat (mapcar (lambda (a) (plist-get a :title)) actions))) summary)
              (let ((review (plist-get (cl-find "Review file" actions :key (lambda (a) (plist-get a :title))
                                                :test #'equal)
                                       :command)))
                (eglot-execute-command server (intern (plist-get review :command)) (plist-get review :arguments))
                (with-timeout (30 (push "no finding came within 30 s" errors))
                  (while (not eglot--diagnostics) (accept-process-output nil 0.05)))
                (push (cons 'findings (vconcat (mapcar #'flymake-diagnostic-text eglot--diagnostics))) summary)))
            (ignore-errors (let ((eglot-autoreconnect nil)) (eglot-shutdown server))))))
    (error (push (format "%S" err) errors)))
  (push (cons 'errors (vconcat errors)) summary)
  (write-region (json-encode summary) nil (getenv "FLOWEDIT_EMACS_SUMMARY") nil 'silent)
  (kill-emacs (if errors 1 0)))
;;; eglot_bare.el ends here
